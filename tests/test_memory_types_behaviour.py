"""The memory-type registry: the built-in types, registered names (lower-case identifiers of at most
40 characters, each once), and the refusals a store gives for an unknown or malformed type."""

from __future__ import annotations

import pytest

from harness_memory import InvalidInputError, MemoryStore, Settings
from harness_memory.errors import UnknownMemoryTypeError
from harness_memory.memory_types import BUILTIN_TYPES, TypeRegistry


def test_the_builtin_types_come_first_and_registered_ones_follow_in_order_once():
    reg = TypeRegistry(["plan", "deadend", "plan", "success"])
    assert reg.names == (*BUILTIN_TYPES, "plan", "deadend")
    assert "plan" in reg and "success" in reg and "nope" not in reg and 3 not in reg
    assert TypeRegistry().names == BUILTIN_TYPES


DOCUMENTED = ("success", "failure", "decision", "pattern", "preference", "context", "episode", "fact", "document")


def test_the_builtin_types_are_the_documented_nine_and_a_store_takes_each(tmp_path):
    assert TypeRegistry().names == DOCUMENTED
    with MemoryStore(tmp_path / "b.db") as s:
        assert s.memory_types == DOCUMENTED
        for t in DOCUMENTED:
            assert s.remember(f"a {t} about the parser cache", type=t, agent_id="a").type == t


@pytest.mark.parametrize("name", ["a", "a" * 40, "plan_2", "x9"])
def test_lower_case_identifiers_up_to_forty_characters_register(name):
    assert name in TypeRegistry([name])


@pytest.mark.parametrize("name", ["", "a" * 41, "Plan", "2plan", "_plan", "plan-b", "plan b", None, 3])
def test_other_names_are_refused(name):
    with pytest.raises(InvalidInputError):
        TypeRegistry([name])


def test_check_returns_a_known_type_and_names_the_known_ones_for_an_unknown_one():
    reg = TypeRegistry(["plan"])
    assert reg.check("plan") == "plan" and reg.check("failure") == "failure"
    with pytest.raises(UnknownMemoryTypeError) as err:
        reg.check("planz")
    assert err.value.name == "planz" and err.value.known == sorted(reg.names)
    # the message names the type, lists every known one in order and says how to register more
    message = str(err.value)
    assert message.startswith("unknown memory type 'planz'; known types: " + ", ".join(sorted(reg.names)))
    assert "HARNESS_MEMORY_EXTRA_TYPES" in message
    with pytest.raises(UnknownMemoryTypeError) as long:
        reg.check("q" * 1000)
    assert long.value.name == "q" * 200  # the message quotes at most 200 characters of it
    with pytest.raises(InvalidInputError) as not_text:
        reg.check(["plan"])
    assert not isinstance(not_text.value, UnknownMemoryTypeError) and "string" in str(not_text.value)


def test_a_store_accepts_its_registered_types_only(tmp_path):
    with MemoryStore(tmp_path / "t.db", settings=Settings(extra_types=["plan"])) as s:
        assert s.memory_types[-1] == "plan"
        m = s.remember("ship the parser first", type="plan", agent_id="a")
        assert s.get(m.id).type == "plan"
        with pytest.raises(UnknownMemoryTypeError):
            s.remember("ship it", type="deadend", agent_id="a")
