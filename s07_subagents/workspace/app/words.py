"""The words the greeter says."""

GREETING = "Hello"
PUNCTUATION = "!"
