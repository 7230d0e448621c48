"""The Hub emulator's dataset repos: five standard benchmarks in miniature, written by this project.

Acceptance length is reported per dataset on GSM8K, MATH-500, HumanEval, MBPP and
MT-Bench. The emulator serves a small stand-in for each under the real repo id,
with the real file layout, file format and column names (verified against the Hub;
see each repo.yaml's note), so the code a GPU host runs to fetch and read them
(specops.tools.datasets) runs unchanged against the simulated Hub. The rows are
original, short and made up in each dataset's style: none is copied from the real data.

Every row is written so that the simulator's prompt classifier
(specops.sim.serving.prompt_kind) sees what the real dataset is about once the
prompt is formatted as the benchmark formats it: GSM8K and MATH-500 as math,
HumanEval and MBPP as code, MT-Bench first turns as chat (so the fixture's MT-Bench
rows come from its writing, roleplay, reasoning, extraction, STEM and humanities
categories; the real set also has math and coding questions).

Run `python -m specops.sim.hub.dataset_fixtures` (or `.venv/bin/python sim/hub/dataset_fixtures.py`)
to write every file under sim/hub/fixtures/datasets/ again: repo.yaml, README.md,
.gitattributes and the data files. Parquet is written with pyarrow; the rows are
the same on every run (the bytes carry pyarrow's version in their metadata).
"""

from __future__ import annotations

import hashlib
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

DATASETS_DIR = Path(__file__).with_name("fixtures") / "datasets"
FIXTURE_DATE = "2026-02-02T10:00:00.000Z"

# What the real Hub writes in a dataset repo's .gitattributes for the formats used here (shortened).
GITATTRIBUTES = """\
*.arrow filter=lfs diff=lfs merge=lfs -text
*.parquet filter=lfs diff=lfs merge=lfs -text
*.zst filter=lfs diff=lfs merge=lfs -text
"""


@dataclass(frozen=True)
class FixtureDataset:
    repo_id: str
    path: str = field(metadata={"doc": "the data file, as the real repo names it"})
    schema: dict[str, str] = field(metadata={"doc": "column -> type: string, int32, int64, list<string>"})
    rows: list[dict[str, Any]]
    note: str = ""
    card: str = ""

    @property
    def is_parquet(self) -> bool:
        return self.path.endswith(".parquet")

    @property
    def sha(self) -> str:
        """A made-up commit id, stable across runs."""
        return hashlib.sha1(f"specops-dataset-fixture:{self.repo_id}".encode()).hexdigest()


def _boxed_solution(steps: str, answer: str) -> str:
    return f"{steps} The answer is $\\boxed{{{answer}}}$."


# ---------------------------------------------------------------- gsm8k (openai/gsm8k, config main)

_GSM8K = [
    (
        "Mira bakes 4 trays of muffins with 12 muffins on each tray. She sells 30 muffins at the market. "
        "How many muffins does she have left?",
        "Mira bakes 4*12=<<4*12=48>>48 muffins.\nAfter selling 30 she has 48-30=<<48-30=18>>18 muffins left.\n#### 18",
    ),
    (
        "A bike rental costs $6 per hour plus a $5 helmet fee. Tomas rents a bike for 3 hours. How much does he pay?",
        "The hours cost 6*3=<<6*3=18>>18 dollars.\nWith the helmet he pays 18+5=<<18+5=23>>23 dollars.\n#### 23",
    ),
    (
        "A garden has 7 rows of tulips with 9 tulips in each row. A rabbit eats 15 tulips. How many tulips remain?",
        "There are 7*9=<<7*9=63>>63 tulips.\nAfter the rabbit, 63-15=<<63-15=48>>48 tulips remain.\n#### 48",
    ),
    (
        "Jonah reads 25 pages every weekday and 40 pages on each weekend day. How many pages does he read in one week?",
        "Weekdays: 5*25=<<5*25=125>>125 pages.\nWeekend: 2*40=<<2*40=80>>80 pages.\n"
        "In total 125+80=<<125+80=205>>205 pages.\n#### 205",
    ),
    (
        "A school orders 8 boxes of pencils. Each box holds 24 pencils. The pencils are shared equally among "
        "6 classrooms. How many pencils does each classroom get?",
        "There are 8*24=<<8*24=192>>192 pencils.\nEach classroom gets 192/6=<<192/6=32>>32 pencils.\n#### 32",
    ),
    (
        "Priya saves $15 each week. She wants a guitar that costs $240. How many weeks must she save?",
        "She needs 240/15=<<240/15=16>>16 weeks.\n#### 16",
    ),
    (
        "A train travels 180 miles in 3 hours. At the same speed, how many miles does it travel in 5 hours?",
        "The speed is 180/3=<<180/3=60>>60 miles per hour.\nIn 5 hours it goes 60*5=<<60*5=300>>300 miles.\n#### 300",
    ),
    (
        "Leo has 3 times as many stickers as Ana. Ana has 14 stickers. How many stickers do they have together?",
        "Leo has 3*14=<<3*14=42>>42 stickers.\nTogether they have 42+14=<<42+14=56>>56 stickers.\n#### 56",
    ),
    (
        "A farmer collects 36 eggs a day. He packs them in cartons of 12. How many cartons does he fill in a week?",
        "Each day fills 36/12=<<36/12=3>>3 cartons.\nIn a week he fills 3*7=<<3*7=21>>21 cartons.\n#### 21",
    ),
    (
        "A shirt costs $40 and is on sale for 25 percent off. How much does the shirt cost on sale?",
        "The discount is 40*25/100=<<40*25/100=10>>10 dollars.\nThe sale price is 40-10=<<40-10=30>>30 dollars.\n#### 30",
    ),
    (
        "Sam swims 4 laps on Monday, twice as many on Tuesday and 3 fewer than Tuesday on Wednesday. "
        "How many laps does he swim in the three days?",
        "Tuesday: 4*2=<<4*2=8>>8 laps.\nWednesday: 8-3=<<8-3=5>>5 laps.\nTotal: 4+8+5=<<4+8+5=17>>17 laps.\n#### 17",
    ),
    (
        "A library has 450 books. It lends out 120 books and gets 75 new ones. How many books does it have now?",
        "After lending it has 450-120=<<450-120=330>>330 books.\n"
        "With the new ones it has 330+75=<<330+75=405>>405 books.\n#### 405",
    ),
    (
        "Each of 5 friends pays $8 for pizza and $3 for drinks. How much do they spend altogether?",
        "Each pays 8+3=<<8+3=11>>11 dollars.\nAltogether they spend 5*11=<<5*11=55>>55 dollars.\n#### 55",
    ),
    (
        "A tank holds 200 liters of water. It leaks 8 liters an hour. How many liters are left after 12 hours?",
        "It loses 8*12=<<8*12=96>>96 liters.\nThere are 200-96=<<200-96=104>>104 liters left.\n#### 104",
    ),
    (
        "Nadia buys 6 notebooks at $2 each and 4 pens at $1.50 each. How much change does she get from $20?",
        "Notebooks cost 6*2=<<6*2=12>>12 dollars.\nPens cost 4*1.5=<<4*1.5=6>>6 dollars.\n"
        "She gets 20-12-6=<<20-12-6=2>>2 dollars back.\n#### 2",
    ),
    (
        "A movie theater has 18 rows of 22 seats. On Friday 290 seats are filled. How many seats are empty?",
        "There are 18*22=<<18*22=396>>396 seats.\n396-290=<<396-290=106>>106 seats are empty.\n#### 106",
    ),
]

# ---------------------------------------------------------------- MATH-500 (HuggingFaceH4/MATH-500)

_MATH500 = [
    (
        "What is the value of $3^4 - 2^5$?",
        "$3^4 = 81$ and $2^5 = 32$, so the difference is $49$.",
        "49",
        "Prealgebra",
        1,
    ),
    (
        "Solve for $x$: $5x - 7 = 3x + 11$.",
        "Subtracting $3x$ and adding $7$ gives $2x = 18$, so $x = 9$.",
        "9",
        "Algebra",
        1,
    ),
    (
        "Find the remainder when $2^{10}$ is divided by $7$.",
        "Since $2^3 = 8 \\equiv 1 \\pmod 7$, $2^{10} = (2^3)^3 \\cdot 2 \\equiv 2 \\pmod 7$.",
        "2",
        "Number Theory",
        2,
    ),
    (
        "How many positive divisors does $72$ have?",
        "$72 = 2^3 \\cdot 3^2$, so it has $(3+1)(2+1) = 12$ divisors.",
        "12",
        "Number Theory",
        2,
    ),
    (
        "Compute $\\frac{3}{4} + \\frac{5}{6}$. Express your answer as a common fraction.",
        "With denominator $12$: $\\frac{9}{12} + \\frac{10}{12} = \\frac{19}{12}$.",
        "\\frac{19}{12}",
        "Prealgebra",
        2,
    ),
    (
        "A fair six-sided die is rolled twice. What is the probability that the sum of the rolls is $9$?",
        "The pairs $(3,6),(4,5),(5,4),(6,3)$ give $9$: the probability is $\\frac{4}{36} = \\frac{1}{9}$.",
        "\\frac{1}{9}",
        "Counting & Probability",
        3,
    ),
    (
        "The legs of a right triangle measure $9$ and $12$. What is the length of the hypotenuse?",
        "$\\sqrt{9^2 + 12^2} = \\sqrt{225} = 15$.",
        "15",
        "Geometry",
        1,
    ),
    (
        "Find the sum of all real solutions of the equation $x^2 - 7x + 10 = 0$.",
        "By Vieta's formulas the sum of the roots is $7$.",
        "7",
        "Algebra",
        2,
    ),
    (
        "If $f(x) = 2x + 3$ and $g(x) = x^2$, find the value of $f(g(3))$.",
        "$g(3) = 9$ and $f(9) = 21$.",
        "21",
        "Algebra",
        1,
    ),
    (
        "What is the smallest positive integer that leaves a remainder of $1$ when divided by $2$, $3$ and $5$?",
        "It is one more than a multiple of $\\operatorname{lcm}(2,3,5) = 30$; the smallest such integer above $1$ is $31$.",
        "31",
        "Number Theory",
        3,
    ),
    (
        "Evaluate $\\sqrt{50} \\cdot \\sqrt{2}$.",
        "$\\sqrt{50 \\cdot 2} = \\sqrt{100} = 10$.",
        "10",
        "Prealgebra",
        1,
    ),
    (
        "How many ways can $4$ books be arranged on a shelf if two particular books must be next to each other?",
        "Glue the pair: $3!$ arrangements, times $2$ orders of the pair, gives $12$.",
        "12",
        "Counting & Probability",
        3,
    ),
    (
        "Compute $\\sin^2 30^\\circ + \\cos^2 60^\\circ$.",
        "$\\sin 30^\\circ = \\cos 60^\\circ = \\frac{1}{2}$, so the sum is $\\frac{1}{4} + \\frac{1}{4} = \\frac{1}{2}$.",
        "\\frac{1}{2}",
        "Precalculus",
        2,
    ),
    (
        "The sum of three consecutive integers is $72$. What is the largest of them?",
        "They are $n-1, n, n+1$ with $3n = 72$, so $n = 24$ and the largest is $25$.",
        "25",
        "Algebra",
        1,
    ),
    (
        "Find the value of $k$ so that the line $y = kx + 2$ passes through the point $(3, 14)$.",
        "$14 = 3k + 2$ gives $k = 4$.",
        "4",
        "Algebra",
        2,
    ),
    (
        "What is the area of a circle whose circumference is $10\\pi$? Express your answer in terms of $\\pi$.",
        "The radius is $5$, so the area is $25\\pi$.",
        "25\\pi",
        "Geometry",
        2,
    ),
]

# ---------------------------------------------------------------- HumanEval (openai/openai_humaneval)

_HUMANEVAL = [
    (
        "count_vowels",
        'def count_vowels(text: str) -> int:\n    """Return how many vowels (a, e, i, o, u, either case) the string holds.\n'
        "    >>> count_vowels('Banana')\n    3\n    >>> count_vowels('xyz')\n    0\n    \"\"\"\n",
        "    return sum(1 for c in text.lower() if c in 'aeiou')\n",
        "def check(candidate):\n    assert candidate('Banana') == 3\n    assert candidate('') == 0\n"
        "    assert candidate('AEIOU') == 5\n",
    ),
    (
        "second_largest",
        "from typing import List\n\n\ndef second_largest(numbers: List[int]) -> int:\n"
        '    """Given a list of integers with at least two distinct values, return the second largest value.\n'
        '    >>> second_largest([4, 1, 7, 7, 3])\n    4\n    """\n',
        "    return sorted(set(numbers))[-2]\n",
        "def check(candidate):\n    assert candidate([4, 1, 7, 7, 3]) == 4\n    assert candidate([2, 9]) == 2\n",
    ),
    (
        "is_palindrome_sentence",
        "def is_palindrome_sentence(sentence: str) -> bool:\n"
        '    """Return True if the sentence reads the same backwards, ignoring case, spaces and punctuation.\n'
        "    >>> is_palindrome_sentence('Never odd or even')\n    True\n"
        '    >>> is_palindrome_sentence(\'Hello\')\n    False\n    """\n',
        "    letters = [c.lower() for c in sentence if c.isalnum()]\n    return letters == letters[::-1]\n",
        "def check(candidate):\n    assert candidate('Never odd or even') is True\n    assert candidate('Hello') is False\n",
    ),
    (
        "running_max",
        "from typing import List\n\n\ndef running_max(values: List[int]) -> List[int]:\n"
        '    """Return a list whose i-th element is the largest of values[0..i].\n'
        '    >>> running_max([1, 3, 2, 5, 4])\n    [1, 3, 3, 5, 5]\n    """\n',
        "    out, best = [], None\n    for v in values:\n        best = v if best is None else max(best, v)\n"
        "        out.append(best)\n    return out\n",
        "def check(candidate):\n    assert candidate([1, 3, 2, 5, 4]) == [1, 3, 3, 5, 5]\n    assert candidate([]) == []\n",
    ),
    (
        "compress_runs",
        "def compress_runs(text: str) -> str:\n"
        '    """Replace each run of a repeated character by the character and the run length.\n'
        "    >>> compress_runs('aaabcc')\n    'a3b1c2'\n    \"\"\"\n",
        "    out = []\n    i = 0\n    while i < len(text):\n        j = i\n        while j < len(text) and text[j] == text[i]:\n"
        "            j += 1\n        out.append(f'{text[i]}{j - i}')\n        i = j\n    return ''.join(out)\n",
        "def check(candidate):\n    assert candidate('aaabcc') == 'a3b1c2'\n    assert candidate('') == ''\n",
    ),
    (
        "digits_product",
        "def digits_product(n: int) -> int:\n"
        '    """Return the product of the odd digits of a positive integer n, or 0 if none is odd.\n'
        '    >>> digits_product(235)\n    15\n    >>> digits_product(48)\n    0\n    """\n',
        "    odd = [int(d) for d in str(n) if int(d) % 2]\n    if not odd:\n        return 0\n"
        "    product = 1\n    for d in odd:\n        product *= d\n    return product\n",
        "def check(candidate):\n    assert candidate(235) == 15\n    assert candidate(48) == 0\n    assert candidate(7) == 7\n",
    ),
    (
        "merge_sorted",
        "from typing import List\n\n\ndef merge_sorted(a: List[int], b: List[int]) -> List[int]:\n"
        '    """Merge two sorted lists into one sorted list.\n'
        '    >>> merge_sorted([1, 4, 9], [2, 3, 10])\n    [1, 2, 3, 4, 9, 10]\n    """\n',
        "    return sorted(a + b)\n",
        "def check(candidate):\n    assert candidate([1, 4, 9], [2, 3, 10]) == [1, 2, 3, 4, 9, 10]\n"
        "    assert candidate([], [5]) == [5]\n",
    ),
    (
        "title_words",
        "def title_words(sentence: str) -> str:\n"
        '    """Capitalize the first letter of every word longer than three letters.\n'
        "    >>> title_words('the quick brown fox')\n    'the Quick Brown fox'\n    \"\"\"\n",
        "    return ' '.join(w.capitalize() if len(w) > 3 else w for w in sentence.split(' '))\n",
        "def check(candidate):\n    assert candidate('the quick brown fox') == 'the Quick Brown fox'\n",
    ),
    (
        "balanced_brackets",
        "def balanced_brackets(text: str) -> bool:\n"
        '    """Return True if every opening bracket in the string "([{" is closed in the right order.\n'
        "    >>> balanced_brackets('([]{})')\n    True\n    >>> balanced_brackets('(]')\n    False\n    \"\"\"\n",
        "    pairs = {')': '(', ']': '[', '}': '{'}\n    stack = []\n    for c in text:\n"
        "        if c in '([{':\n            stack.append(c)\n        elif c in pairs:\n"
        "            if not stack or stack.pop() != pairs[c]:\n                return False\n    return not stack\n",
        "def check(candidate):\n    assert candidate('([]{})') is True\n    assert candidate('(]') is False\n"
        "    assert candidate('((') is False\n",
    ),
    (
        "chunk_list",
        "from typing import List\n\n\ndef chunk_list(items: List[int], size: int) -> List[List[int]]:\n"
        '    """Split the list into consecutive chunks of the given size; the last chunk may be shorter.\n'
        '    >>> chunk_list([1, 2, 3, 4, 5], 2)\n    [[1, 2], [3, 4], [5]]\n    """\n',
        "    return [items[i : i + size] for i in range(0, len(items), size)]\n",
        "def check(candidate):\n    assert candidate([1, 2, 3, 4, 5], 2) == [[1, 2], [3, 4], [5]]\n"
        "    assert candidate([], 3) == []\n",
    ),
    (
        "count_words",
        "from typing import Dict\n\n\ndef count_words(text: str) -> Dict[str, int]:\n"
        '    """Return a dictionary mapping each lowercase word of the text to how often it occurs.\n'
        "    >>> count_words('a b A')\n    {'a': 2, 'b': 1}\n    \"\"\"\n",
        "    counts = {}\n    for word in text.lower().split():\n        counts[word] = counts.get(word, 0) + 1\n"
        "    return counts\n",
        "def check(candidate):\n    assert candidate('a b A') == {'a': 2, 'b': 1}\n    assert candidate('') == {}\n",
    ),
    (
        "rotate_left",
        "from typing import List\n\n\ndef rotate_left(values: List[int], k: int) -> List[int]:\n"
        '    """Rotate the list k places to the left.\n'
        '    >>> rotate_left([1, 2, 3, 4], 1)\n    [2, 3, 4, 1]\n    """\n',
        "    if not values:\n        return []\n    k %= len(values)\n    return values[k:] + values[:k]\n",
        "def check(candidate):\n    assert candidate([1, 2, 3, 4], 1) == [2, 3, 4, 1]\n    assert candidate([], 3) == []\n",
    ),
]

# ---------------------------------------------------------------- MBPP sanitized (google-research-datasets/mbpp)

_MBPP_SOURCE = "Specops Fixture Questions.ipynb"
_MBPP = [
    (
        "Write a python function to count the uppercase letters in a given string.",
        "def count_upper(s):\n    return sum(1 for c in s if c.isupper())",
        ["assert count_upper('HeLLo') == 3", "assert count_upper('abc') == 0"],
    ),
    (
        "Write a function to remove duplicate elements from a list while keeping their first order.",
        "def dedupe(items):\n    seen = set()\n    out = []\n    for x in items:\n        if x not in seen:\n"
        "            seen.add(x)\n            out.append(x)\n    return out",
        ["assert dedupe([3, 1, 3, 2, 1]) == [3, 1, 2]", "assert dedupe([]) == []"],
    ),
    (
        "Write a python function to find the sum of the squares of the first n odd natural numbers.",
        "def odd_square_sum(n):\n    return sum((2 * i + 1) ** 2 for i in range(n))",
        ["assert odd_square_sum(2) == 10", "assert odd_square_sum(3) == 35"],
    ),
    (
        "Write a function to check whether a given string is a valid hexadecimal color like '#1a2B3c'.",
        "import re\ndef is_hex_color(s):\n    return re.fullmatch(r'#[0-9a-fA-F]{6}', s) is not None",
        ["assert is_hex_color('#1a2B3c') == True", "assert is_hex_color('123456') == False"],
    ),
    (
        "Write a function to flatten a nested list of lists into a single list.",
        "def flatten(nested):\n    return [x for inner in nested for x in inner]",
        ["assert flatten([[1, 2], [3], []]) == [1, 2, 3]"],
    ),
    (
        "Write a python function to find the largest element in each sublist of a list.",
        "def max_each(lists):\n    return [max(x) for x in lists]",
        ["assert max_each([[1, 5], [7, 2], [3]]) == [5, 7, 3]"],
    ),
    (
        "Write a function to swap the keys and values of a dictionary.",
        "def invert(d):\n    return {v: k for k, v in d.items()}",
        ["assert invert({'a': 1, 'b': 2}) == {1: 'a', 2: 'b'}"],
    ),
    (
        "Write a python function to check whether all the characters of a string are the same.",
        "def all_same(s):\n    return len(set(s)) <= 1",
        ["assert all_same('aaa') == True", "assert all_same('aba') == False"],
    ),
    (
        "Write a function to return the words of a sentence that are longer than k characters.",
        "def long_words(sentence, k):\n    return [w for w in sentence.split() if len(w) > k]",
        ["assert long_words('a quick brown fox', 3) == ['quick', 'brown']"],
    ),
    (
        "Write a python function to convert a list of integers into a single integer by joining their digits.",
        "def join_digits(nums):\n    return int(''.join(str(n) for n in nums))",
        ["assert join_digits([1, 23, 4]) == 1234", "assert join_digits([7]) == 7"],
    ),
    (
        "Write a function to sort a list of tuples by their second element.",
        "def sort_by_second(pairs):\n    return sorted(pairs, key=lambda p: p[1])",
        ["assert sort_by_second([(1, 3), (2, 1), (3, 2)]) == [(2, 1), (3, 2), (1, 3)]"],
    ),
    (
        "Write a function to find the index of the first repeated character in a given string, or -1 if none repeats.",
        "def first_repeat(s):\n    seen = set()\n    for i, c in enumerate(s):\n        if c in seen:\n"
        "            return i\n        seen.add(c)\n    return -1",
        ["assert first_repeat('abcb') == 3", "assert first_repeat('abc') == -1"],
    ),
    (
        "Write a python function to count the number of set bits in the binary form of a number.",
        "def set_bits(n):\n    return bin(n).count('1')",
        ["assert set_bits(5) == 2", "assert set_bits(0) == 0"],
    ),
    (
        "Write a function to merge two dictionaries, adding the values of keys present in both.",
        "from collections import Counter\ndef merge_add(a, b):\n    return dict(Counter(a) + Counter(b))",
        ["assert merge_add({'x': 1}, {'x': 2, 'y': 3}) == {'x': 3, 'y': 3}"],
        ["from collections import Counter"],
    ),
    (
        "Write a function to check if a list is sorted in non-decreasing order.",
        "def is_sorted(items):\n    return all(a <= b for a, b in zip(items, items[1:]))",
        ["assert is_sorted([1, 2, 2, 5]) == True", "assert is_sorted([3, 1]) == False"],
    ),
    (
        "Write a python function to reverse the order of words in a given string.",
        "def reverse_words(s):\n    return ' '.join(reversed(s.split()))",
        ["assert reverse_words('one two three') == 'three two one'"],
    ),
]

# ---------------------------------------------------------------- MT-Bench (HuggingFaceH4/mt_bench_prompts)

_MT_BENCH = [
    (
        "writing",
        "Write a warm welcome message for new members of a neighborhood gardening club.",
        "Now shorten it to three sentences and add a line about the spring seed swap.",
    ),
    (
        "writing",
        "Draft a short travel blog post about a rainy weekend in a seaside town.",
        "Rewrite the post as a postcard to a friend.",
    ),
    (
        "writing",
        "Compose a persuasive note asking your coworkers to keep the shared kitchen tidy.",
        "Make the tone more playful without losing the message.",
    ),
    (
        "roleplay",
        "Pretend you are a lighthouse keeper describing your evening routine to a visitor.",
        "The visitor asks what you miss most about life in the city. Answer in character.",
    ),
    (
        "roleplay",
        "Act as a museum guide introducing a gallery of old maps to a group of students.",
        "A student asks why some maps show sea monsters. Reply as the guide.",
    ),
    (
        "roleplay",
        "Imagine you are a chef explaining to a new apprentice how to run a calm kitchen during a busy dinner.",
        "The apprentice burned the sauce. What do you tell them?",
    ),
    (
        "reasoning",
        "Anna is taller than Ben, and Ben is taller than Cleo. Is Cleo taller than Anna? Explain your reasoning.",
        "If Dev is shorter than Cleo, who is the shortest of the four?",
    ),
    (
        "reasoning",
        "A box is labeled apples, another oranges, and a third mixed, but every label is wrong. "
        "You may take out one fruit from one box. Which box do you choose, and why?",
        "Explain how you would then relabel all three boxes.",
    ),
    (
        "reasoning",
        "Three friends each order a different drink: tea, juice and cocoa. Rosa does not like tea, "
        "and the friend with juice sits next to Omar. Who could have ordered what?",
        "Which extra clue would settle the answer completely?",
    ),
    (
        "extraction",
        "From the following note, extract the names of the people and the places they visited: "
        "'Lena spent June in Lisbon, while Marco toured Kyoto and then Osaka.'",
        "Present the same information as a short table with columns person and places.",
    ),
    (
        "extraction",
        "Read this review and state the product, the overall sentiment and the main complaint: "
        "'The kettle looks lovely and boils fast, but the lid sticks every single morning.'",
        "Now suggest a reply the seller could send to the reviewer.",
    ),
    (
        "stem",
        "Explain in simple terms why the sky looks blue during the day and red at sunset.",
        "How would the sky look from the surface of the Moon, and why?",
    ),
    (
        "stem",
        "Describe how vaccines train the immune system to recognize a virus.",
        "Explain why some vaccines need a booster while others do not.",
    ),
    (
        "stem",
        "What causes ocean tides, and why are there usually two high tides each day?",
        "Describe how spring tides differ from neap tides.",
    ),
    (
        "humanities",
        "Discuss how the invention of the printing press changed the spread of ideas in Europe.",
        "Compare that change with the effect of the internet on news today.",
    ),
    (
        "humanities",
        "What are the main ideas behind the concept of the social contract in political philosophy?",
        "Pick one thinker and explain how their view differs from the others.",
    ),
]


def _mt_bench_prompt_id(turns: list[str]) -> int:
    """prompt_id as the real dataset computes it (its card gives the formula)."""
    return int(hashlib.sha256("".join(turns).encode("utf-8")).hexdigest(), 16) % (10**8)


def datasets() -> list[FixtureDataset]:
    """The five fixture datasets, rows and all."""
    return [
        FixtureDataset(
            repo_id="openai/gsm8k",
            path="main/test-00000-of-00001.parquet",
            schema={"question": "string", "answer": "string"},
            rows=[{"question": q, "answer": a} for q, a in _GSM8K],
            note=(
                "Real: the repo id, config `main`, the file main/test-00000-of-00001.parquet (the test split, "
                "1319 rows on the Hub) and its columns question, answer (answers end in '#### N'). The real repo "
                "also holds main/train-* and the socratic config, left out here. Written by this project: the "
                "16 rows, README.md, .gitattributes, the commit id and dates."
            ),
            card="GSM8K-style grade-school word problems (config main, split test).",
        ),
        FixtureDataset(
            repo_id="HuggingFaceH4/MATH-500",
            path="test.jsonl",
            schema={
                "problem": "string",
                "solution": "string",
                "answer": "string",
                "subject": "string",
                "level": "int64",
                "unique_id": "string",
            },
            rows=[
                {
                    "problem": problem,
                    "solution": _boxed_solution(steps, answer),
                    "answer": answer,
                    "subject": subject,
                    "level": level,
                    "unique_id": f"test/{subject.lower().replace(' & ', '_and_').replace(' ', '_')}/{9000 + i}.json",
                }
                for i, (problem, steps, answer, subject, level) in enumerate(_MATH500)
            ],
            note=(
                "Real: the repo id, the single file test.jsonl at the repo root (JSON lines, not parquet; split "
                "test, 500 rows on the Hub) and its columns problem, solution, answer, subject, level (an "
                "integer), unique_id ('test/<subject>/<n>.json'). The real main commit seen was "
                "ff5b20257d8185524591543f8ff5993951537bb8. Written by this project: the 16 rows (unique_ids "
                "numbered from 9000), README.md, .gitattributes, the commit id and dates."
            ),
            card="MATH-style competition problems with worked solutions (split test).",
        ),
        FixtureDataset(
            repo_id="openai/openai_humaneval",
            path="openai_humaneval/test-00000-of-00001.parquet",
            schema={
                "task_id": "string",
                "prompt": "string",
                "canonical_solution": "string",
                "test": "string",
                "entry_point": "string",
            },
            rows=[
                {
                    "task_id": f"HumanEval/{i}",
                    "prompt": prompt,
                    "canonical_solution": solution,
                    "test": test,
                    "entry_point": entry,
                }
                for i, (entry, prompt, solution, test) in enumerate(_HUMANEVAL)
            ],
            note=(
                "Real: the repo id, the file openai_humaneval/test-00000-of-00001.parquet (split test, 164 rows "
                "on the Hub) and its columns task_id, prompt, canonical_solution, test, entry_point. Written by "
                "this project: the 12 problems (none is a HumanEval problem), README.md, .gitattributes, the "
                "commit id and dates."
            ),
            card="HumanEval-style Python function stubs with docstrings and tests (split test).",
        ),
        FixtureDataset(
            repo_id="google-research-datasets/mbpp",
            path="sanitized/test-00000-of-00001.parquet",
            schema={
                "source_file": "string",
                "task_id": "int32",
                "prompt": "string",
                "code": "string",
                "test_imports": "list<string>",
                "test_list": "list<string>",
            },
            rows=[
                {
                    "source_file": _MBPP_SOURCE,
                    "task_id": 601 + i,
                    "prompt": entry[0],
                    "code": entry[1],
                    "test_imports": list(entry[3]) if len(entry) > 3 else [],
                    "test_list": list(entry[2]),
                }
                for i, entry in enumerate(_MBPP)
            ],
            note=(
                "Real: the repo id, config `sanitized`, the file sanitized/test-00000-of-00001.parquet (split "
                "test, 257 rows on the Hub) and its columns source_file, task_id, prompt, code, test_imports, "
                "test_list. The real repo also holds the full config and the sanitized train, validation and "
                "prompt splits, left out here. Written by this project: the 16 rows (task_ids from 601, outside "
                "the real range), README.md, .gitattributes, the commit id and dates."
            ),
            card="MBPP-style short Python tasks with asserts (config sanitized, split test).",
        ),
        FixtureDataset(
            repo_id="HuggingFaceH4/mt_bench_prompts",
            path="data/train-00000-of-00001-67c6c9fef07685a3.parquet",
            schema={"prompt": "list<string>", "prompt_id": "int64", "category": "string", "reference": "list<string>"},
            rows=[
                {
                    "prompt": [first, second],
                    "prompt_id": _mt_bench_prompt_id([first, second]),
                    "category": category,
                    "reference": [],
                }
                for category, first, second in _MT_BENCH
            ],
            note=(
                "Real: the repo id, the split train (80 questions of two turns on the Hub), the file name "
                "data/train-00000-of-00001-67c6c9fef07685a3.parquet (push_to_hub's name, with its hash) and the "
                "columns prompt (the list of turns), prompt_id (computed with the card's formula), category, "
                "reference (a list, empty outside math and coding). The real repo also holds raw/question.jsonl, "
                "left out here. Written by this project: the 16 questions (from six of the eight categories: no "
                "math or coding, so every first turn is chat to the simulator), README.md, .gitattributes, the "
                "commit id and dates."
            ),
            card="MT-Bench-style two-turn conversation prompts (split train).",
        ),
    ]


# ---------------------------------------------------------------- writing the files


def _arrow_schema(schema: dict[str, str]) -> Any:
    import pyarrow as pa

    types = {"string": pa.string(), "int32": pa.int32(), "int64": pa.int64(), "list<string>": pa.list_(pa.string())}
    return pa.schema([(name, types[kind]) for name, kind in schema.items()])


def write_data_file(dataset: FixtureDataset, dest: Path) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    if dataset.is_parquet:
        import pyarrow as pa
        import pyarrow.parquet as pq

        table = pa.Table.from_pylist(dataset.rows, schema=_arrow_schema(dataset.schema))
        pq.write_table(table, dest, compression="snappy")
    else:
        dest.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in dataset.rows))


def _readme(dataset: FixtureDataset) -> str:
    return (
        f"# {dataset.repo_id} (specops fixture)\n\n"
        f"{dataset.card}\n\n"
        "A miniature written for the specops Hub emulator: the real repo's file layout and columns, "
        f"{len(dataset.rows)} original made-up rows. Not the real dataset.\n"
    )


def write_repo(dataset: FixtureDataset, root: Path = DATASETS_DIR) -> Path:
    """Write one dataset repo (repo.yaml and its main/ files) under root/<org>/<name>/."""
    repo_dir = root / dataset.repo_id
    files_dir = repo_dir / "main"
    files_dir.mkdir(parents=True, exist_ok=True)
    (files_dir / ".gitattributes").write_text(GITATTRIBUTES)
    (files_dir / "README.md").write_text(_readme(dataset))
    write_data_file(dataset, files_dir / dataset.path)
    decl = {
        "repo_id": dataset.repo_id,
        "repo_type": "dataset",
        "gated": False,
        "last_modified": FIXTURE_DATE,
        "note": dataset.note,
        "revisions": [
            {
                "sha": dataset.sha,
                "refs": ["main"],
                "date": FIXTURE_DATE,
                "title": "Upload dataset",
                "files_dir": "main",
                "lfs_content": [dataset.path] if dataset.is_parquet else [],
            }
        ],
    }
    header = "# Written by specops.sim.hub.dataset_fixtures: edit the rows there and run it again.\n"
    (repo_dir / "repo.yaml").write_text(header + yaml.safe_dump(decl, sort_keys=False, width=100))
    return repo_dir


def main(argv: list[str] | None = None) -> int:
    root = Path(argv[0]) if argv else DATASETS_DIR
    for dataset in datasets():
        print(write_repo(dataset, root))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
