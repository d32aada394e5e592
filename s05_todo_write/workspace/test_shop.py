import unittest

from shop import count


class ShopTest(unittest.TestCase):
    def test_count(self):
        self.assertEqual(count([("apple", 2), ("pear", 3)]), 5)


if __name__ == "__main__":
    unittest.main()
