import unittest

from tally import report, top


class TallyTest(unittest.TestCase):
    def test_top_sorts_by_count_then_name(self):
        self.assertEqual(top({"wren": 2, "robin": 2, "finch": 5}, 2), [("finch", 5), ("robin", 2)])

    def test_report_aligns_the_counts(self):
        self.assertEqual(report([("robin", 7)]), "   7  robin")


if __name__ == "__main__":
    unittest.main()
