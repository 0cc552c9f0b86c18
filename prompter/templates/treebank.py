"""Words as NLTK's ``word_tokenize`` splits them, without NLTK: what OpenCompass's BM25 retriever scores.

OpenCompass's ``BM25Retriever`` splits each text with NLTK's ``word_tokenize`` (Punkt sentences, then
the improved Penn Treebank word rules) and keeps case; the words decide which examples score highest,
so parity mode splits the same way. :func:`treebank_words` applies the Treebank rules in their order:

* opening quotes (``"`` at a start or after a space or bracket, and `````) become `````; closing ``"``
  and ``''`` become ``''``; a ``'`` opening a quoted word is split off;
* ``, : ; @ # $ % & * ? !``, brackets, dashes (``--`` and U+2012..U+2015) and runs of periods are
  words of their own; a comma or colon before a digit stays inside (``1,000``, ``3:30``), as does a
  period inside a word (``3.50``, ``U.S.``);
* the period ending a sentence is split off, clitics too (``'s 'm 'd 'll 're 've n't``), and a few
  fused words (``cannot gimme gonna gotta lemme wanna``...) are split in two.

Sentences are found as Punkt finds them for ordinary text: a sentence ends at a word closed by ``.``
``?`` or ``!`` (and the quotes or brackets it closes) before a space, except a period after a single
letter (an initial), after a number before a lower-case word, or after a common abbreviation of Punkt's
English model (``Mr.``, ``Dr.``, ``U.S.``, ``Jan.``...; not ``e.g.`` or ``etc.``, which end a sentence
there too). Punkt's model decides rarer cases from word statistics this module does not have;
docs/evaluation.md lists this as the remaining difference.

>>> treebank_words('The cat\\'s "toy" isn\\'t here. It costs $3.50, or 1,000 yen!')  # doctest: +NORMALIZE_WHITESPACE
['The', 'cat', "'s", '``', 'toy', "''", 'is', "n't", 'here', '.',
 'It', 'costs', '$', '3.50', ',', 'or', '1,000', 'yen', '!']
"""

from __future__ import annotations

import re

__all__ = ["treebank_words"]

_Rule = tuple[re.Pattern[str], str]


def _rules(*pairs: tuple[str, str]) -> list[_Rule]:
    return [(re.compile(pattern), replacement) for pattern, replacement in pairs]


_CLOSERS = "\\]\\)}>\"'»”’"  # what may follow a sentence's last period
_OPENING = _rules(
    ("([«“‘„]|`+)", r" \1 "),
    ('^"', "``"),
    ("(``)", r" \1 "),
    ("([ ([{<])(\"|'')", r"\1 `` "),
    ("(?i)(?<!\\w)(')(?!(?:re|ve|ll|m|t|s|d|n)\\b)(?=\\w)", r"\1 "),  # 'quoted, not a clitic
)
_PUNCTUATION = _rules(
    (f"([^.])(\\.)([{_CLOSERS} ]*)\\s*$", r"\1 \2 \3 "),  # the sentence's last period
    ("([:,])([^\\d])", r" \1 \2"),
    ("([:,])$", r" \1 "),
    ("\\.{2,}", r" \g<0> "),
    ("[;@#$%&]", r" \g<0> "),
    ("[\u2012-\u2015]", r" \g<0> "),
    ("([^.])(\\.)([\\]\\)}>\"']*)\\s*$", r"\1 \2\3 "),
    ("[?!]", r" \g<0> "),
    ("([^'])' ", r"\1 ' "),
    ("[*]", r" \g<0> "),
    ("[\\][(){}<>]", r" \g<0> "),
    ("--", " -- "),
)
_CLOSING = _rules(
    ("([»”’])", r" \1 "),
    ("''", " '' "),
    ('"', " '' "),
    ("\\s+", " "),
    ("([^' ])('[sS]|'[mM]|'[dD]|') ", r"\1 \2 "),
    ("([^' ])('ll|'LL|'re|'RE|'ve|'VE|n't|N'T) ", r"\1 \2 "),
)
_FUSED = _rules(
    *((f"(?i)\\b({a})({b})\\b", r" \1 \2 ") for a, b in
      (("can", "not"), ("d", "'ye"), ("gim", "me"), ("gon", "na"), ("got", "ta"), ("lem", "me"), ("more", "'n"))),
    ("(?i)\\b(wan)(na)(?=\\s)", r" \1 \2 "),
    ("(?i) ('t)(is)\\b", r" \1 \2 "),
    ("(?i) ('t)(was)\\b", r" \1 \2 "),
)  # fmt: skip

# A sentence ends at . ? or ! (and the quotes or brackets it closes) before a space; group 1 is the word the
# mark ends, group 3 the next word's first character. It starts at a word's start: one scan of each word.
_SENTENCE_END = re.compile("(?<!\\S)(\\S*?)([.?!])[\"')\\]}]*(?=\\s+(\\S))")
_INITIAL = re.compile("[^\\W\\d]")
_NUMBER = re.compile("-?[.,]?\\d[\\d,.-]*")
# Common abbreviations Punkt's English model knows (it learned them from news text): a period after one
# ends no sentence. Other words with a period inside (e.g., i.e.) end one, as there.
_ABBREVIATIONS = frozenset(
    {
        "mr", "mrs", "ms", "dr", "prof", "st", "jr", "sr", "vs", "inc", "ltd", "co", "corp", "bros", "ok",
        "jan", "feb", "aug", "sep", "sept", "oct", "nov", "dec", "u.s", "u.k", "u.n", "u.s.a", "a.m", "p.m",
        "ph.d", "d.c",
    }
)  # fmt: skip


def _sentences(text: str) -> list[str]:
    """*text* cut where Punkt would end a sentence in ordinary text (see the module's doc)."""
    out, start = [], 0
    for match in _SENTENCE_END.finditer(text):
        word, mark, following = match.group(1), match.group(2), match.group(3)
        if mark == "." and (
            _INITIAL.fullmatch(word)
            or word.lower() in _ABBREVIATIONS
            or (_NUMBER.fullmatch(word) and following.islower())
        ):
            continue
        out.append(text[start : match.end()])
        start = match.start(3)  # the next sentence starts at its first word, as Punkt's do
    out.append(text[start:])
    return out


def _words(sentence: str) -> list[str]:
    for pattern, replacement in _OPENING + _PUNCTUATION:
        sentence = pattern.sub(replacement, sentence)
    sentence = f" {sentence} "
    for pattern, replacement in _CLOSING + _FUSED:
        sentence = pattern.sub(replacement, sentence)
    return sentence.split()


def treebank_words(text: str) -> list[str]:
    """*text*'s words as NLTK's ``word_tokenize`` gives them for ordinary English text, case kept."""
    return [word for sentence in _sentences(text) for word in _words(sentence)]
