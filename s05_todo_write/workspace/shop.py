def count(items):
    """How many things are in the basket."""
    return sum(quantity for _, quantity in items)
