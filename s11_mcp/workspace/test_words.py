import unittest

from words import shout


class ShoutTest(unittest.TestCase):
    def test_one_word(self):
        self.assertEqual(shout("hi"), "HI")

    def test_two_words(self):
        self.assertEqual(shout("hello there"), "HELLO THERE")


if __name__ == "__main__":
    unittest.main()
