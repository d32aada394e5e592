import sys

from course.stages import main

sys.exit(main())
