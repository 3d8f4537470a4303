import harness_memory


def test_all_is_exact():
    exported = {name for name in dir(harness_memory) if not name.startswith("_")}
    # submodules appear as attributes once imported; only re-exported names are public API
    modules = {name for name in exported if type(getattr(harness_memory, name)).__name__ == "module"}
    assert exported - modules == set(harness_memory.__all__)
    assert sorted(harness_memory.__all__) == harness_memory.__all__


def test_every_export_resolves():
    for name in harness_memory.__all__:
        assert getattr(harness_memory, name) is not None


def test_errors_share_one_base():
    for name in harness_memory.__all__:
        obj = getattr(harness_memory, name)
        if isinstance(obj, type) and issubclass(obj, Exception):
            assert issubclass(obj, harness_memory.HarnessMemoryError)
