"""The contributors' tools: each one is run from the repository root as a module, and none is a
test (pytest collects nothing here).

    .venv/bin/python -m tools.sync_lessons [CHAPTER...]   re-sync the lessons' quotes and
                                                          transcripts from code.py and real runs
    .venv/bin/python -m tools.sync_zh [PAGE...]           bring the Chinese pages in step
    .venv/bin/python -m tools.time_stages                 how long the stage checker takes
    .venv/bin/python -m tools.time_suite                  how long the whole suite takes, where
    .venv/bin/python -m tools.time_lessons                how long the lesson tests take
    .venv/bin/python -m tools.time_exercises              how long the exercise proofs take
    .venv/bin/python -m tools.time_runner                 what the warm runner saves
    .venv/bin/python -m tools.time_site                   how long the site takes to build
    .venv/bin/python -m tools.time_page_check             what the full page check costs
    .venv/bin/python -m tools.context_estimate TRACE      how far off s08's estimate of the
                                                          context's size is, call by call

What the tools share with the tests (the lessons' readers, the warm runner, the loopback API)
is in course/: the tests may import a tool (to test it), never a tool a test.
"""
