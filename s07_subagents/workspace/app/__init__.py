"""A small greeter: python3 -m app NAME."""
