import sys


def read_counts(path):
    counts = {}
    with open(path, encoding="utf-8") as lines:
        for line in lines:
            word = line.strip()
            if word:
                counts[word] = counts.get(word, 0) + 1
    return counts


def top(counts, n):
    return sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:n]


def report(pairs):
    return "\n".join(f"{count:>4}  {word}" for word, count in pairs)


if __name__ == "__main__":
    print(report(top(read_counts(sys.argv[1]), 3)))
