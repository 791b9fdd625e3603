"""Seconds per stage of a run: nested stages count apart, a stage entered again adds up."""

import time

from mortar.stages import Stages


def test_nested_stages_count_apart_and_repeated_ones_add_up():
    stages = Stages()
    with stages("test cases"):
        time.sleep(0.02)
        with stages("context check"):
            assert stages.current == "context check"
            time.sleep(0.05)
        assert stages.current == "test cases"
        time.sleep(0.02)
    with stages("context check"):
        time.sleep(0.05)
    assert stages.current is None
    assert list(stages.seconds) == ["test cases", "context check"]
    assert 0.04 <= stages.seconds["test cases"] < 0.09  # the nested 0.05 s is not in it
    assert 0.10 <= stages.seconds["context check"] < 0.16
