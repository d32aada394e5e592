from app.words import PUNCTUATION

FAREWELL = "Goodbye"


def farewell(name):
    return f"{FAREWELL}, {name}{PUNCTUATION}"
