"""Small helpers for words."""


def shout(text):
    """The text in capitals."""
    words = text.split()
    return " ".join(word.upper() for word in words[:-1]) if len(words) > 1 else text.upper()
