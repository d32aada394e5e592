from app.words import GREETING, PUNCTUATION


def greet(name):
    return f"{GREETING}, {name}{PUNCTUATION}"
