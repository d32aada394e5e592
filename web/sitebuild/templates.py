"""The pages' HTML: Jinja2 templates kept as HTML files in web/templates/.

The templates get what they show already made (fragments of HTML the other modules build:
highlighted code, diffs, a rendered lesson), so autoescaping is off and a template escapes
text itself with the `h` filter (html.escape, as the rest of the build). `t(key, ...)` is
strings.say in the page's language, `say(lang, key, ...)` the same in any language. Jinja
drops a template's last newline, so a fragment's file can end with one; a whole page gets
its own back (render_page).
"""

import functools
import html

import jinja2

from .settings import WEB
from .strings import english_inside, say

TEMPLATES = WEB / "templates"

ENVIRONMENT = jinja2.Environment(
    loader=jinja2.FileSystemLoader(TEMPLATES),
    autoescape=False,
    undefined=jinja2.StrictUndefined,  # a value the template names but is not given stops
    keep_trailing_newline=False,
)
ENVIRONMENT.filters["h"] = html.escape
ENVIRONMENT.globals["say"] = say


def render(name, lang, **values):
    """The template `name` filled in, for a page in `lang`."""
    return ENVIRONMENT.get_template(name).render(
        lang=lang, t=functools.partial(say, lang), en=english_inside(lang), **values)
