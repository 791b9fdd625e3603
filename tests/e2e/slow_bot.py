"""A slow dialogue system for the browser test of cancel and resume (never a default, never a result): it answers as
tests/echo_bot.py does after $MORTAR_SLOW_BOT_S seconds, and appends each conversation it answered to
$MORTAR_SLOW_BOT_LOG, one JSON line each, so the test can count what was asked."""

import json
import os
import time

from tests.echo_bot import reply as echo


def reply(messages: list[dict]) -> str:
    time.sleep(float(os.environ.get("MORTAR_SLOW_BOT_S", "0.3")))
    answer = echo(messages)
    with open(os.environ["MORTAR_SLOW_BOT_LOG"], "a", encoding="utf-8") as log:
        log.write(json.dumps(messages) + "\n")
    return answer
