"""A plain Python dialogue system for the tests of `--sut module:function` and the Python API (never a default,
never a result): it answers with the story's sentence that shares most words with the question, and forgets the
story after a few turns, as a weak system would."""

import re


def reply(messages: list[dict]) -> str:
    words = set(re.findall(r"[a-z]+", messages[-1]["content"].lower())) - {"what", "who", "the", "is", "a", "does"}
    sentences = re.split(r"(?<=[.!?])\s+", messages[0]["content"])
    if len(messages) > 9:
        return "Unknown"
    return max(sentences, key=lambda s: len(words & set(re.findall(r"[a-z]+", s.lower()))))


async def reply_later(messages: list[dict]) -> str:
    return reply(messages)


not_a_function = "reply"
