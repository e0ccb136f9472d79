from collections import OrderedDict, defaultdict, deque, namedtuple

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from torch.utils._pytree import tree_flatten, treespec_dumps

from litdata.core.errors import DatasetFormatError, SampleError
from litdata.engine.items.treespec import (
    compile_flattener,
    compile_unflattener,
    flatten,
    leaf_paths,
    register_namedtuple,
    spec_from_json,
    spec_to_json,
)

Point = namedtuple("Point", "x y")
register_namedtuple(Point, "tests.Point")

TORCH_COMPATIBLE = [
    {"a": 1, "b": [1, (2, 3)]},
    5,
    None,
    [None, 1],
    (),
    {},
    {1: 2, "x": 3},
    OrderedDict(a=1, b=2),
    defaultdict(list, a=1),
    deque([1, 2], maxlen=3),
    {"image": np.zeros(3), "label": 1},
]


@pytest.mark.parametrize("sample", TORCH_COMPATIBLE, ids=repr)
def test_data_spec_is_byte_identical_to_torch(sample):
    _, spec = flatten(sample)
    assert spec_to_json(spec) == treespec_dumps(tree_flatten(sample)[1])


@pytest.mark.parametrize("sample", [*TORCH_COMPATIBLE, Point(1, {"z": [2]})], ids=repr)
def test_round_trip(sample):
    leaves, spec = flatten(sample)
    rebuilt = compile_unflattener(spec_from_json(spec_to_json(spec)))(leaves)
    assert type(rebuilt) is type(sample)
    assert repr(rebuilt) == repr(sample)
    assert compile_flattener(spec)(sample) == leaves


def test_namedtuples_are_stored_as_litdata_names_them():
    _, spec = flatten(Point(1, 2))
    schema = spec_to_json(spec)
    assert '"type": "tests.Point", "context": "tests.Point"' in schema
    torch_style = schema.replace('"type": "tests.Point"', '"type": "collections.namedtuple"')
    assert spec_from_json(torch_style) == spec


def test_unknown_namedtuple_says_how_to_register():
    schema = '[1, {"type": "nowhere.Thing", "context": "nowhere.Thing", "children_spec": []}]'
    with pytest.raises(DatasetFormatError, match="register_namedtuple"):
        spec_from_json(schema)


@pytest.mark.parametrize("bad", ["not json", "[2, {}]", '[1, {"type": 3}]'])
def test_malformed_specs_are_errors(bad):
    with pytest.raises(DatasetFormatError):
        spec_from_json(bad)


def test_leaf_paths_name_every_leaf():
    _, spec = flatten(({"a": 1, "b": (2, {"c": 3})},))
    paths = ["sample[0]['a']", "sample[0]['b'][0]", "sample[0]['b'][1]['c']"]
    assert leaf_paths(spec) == paths


def test_lists_of_plain_values_in_dict_samples_are_one_leaf_as_in_litdata():
    leaves, _ = flatten({"a": [1, "x", None], "b": {"c": [[1], []]}, "d": [object()]})
    assert leaves[:2] == [[1, "x", None], [[1], []]]
    assert len(leaves) == 3  # a list holding other objects stays a container
    leaves, _ = flatten([1, 2])  # a list sample is a container, as LitData writes it
    assert leaves == [1, 2]


def test_flattener_accepts_reordered_dict_keys():
    _, spec = flatten({"a": 1, "b": {"c": 2, "d": 3}})
    assert compile_flattener(spec)({"b": {"d": 4, "c": 5}, "a": 6}) == [6, 5, 4]


@pytest.mark.parametrize(
    ("first", "later", "message"),
    [
        ({"a": 1, "b": 2}, {"a": 1, "c": 2}, r"sample: expected dict with keys \['a', 'b'\]"),
        ({"a": 1, "b": 2}, {"a": 1, "b": (2,)}, r"sample\['b'\]: expected a leaf"),
        ({"a": (1, 2)}, {"a": (1,)}, r"sample\['a'\]: expected tuple of length 2"),
        ([[1, 2]], [[1]], r"sample\[0\]: expected list of length 2"),
        ([1, {"x": 1}], [1, {"y": 1}], r"sample\[1\]: expected dict with keys \['x'\]"),
        (5, [5], "expected a single leaf"),
        ((1, 2), [1, 2], "expected tuple of length 2, got list"),
    ],
)
def test_structure_changes_are_named(first, later, message):
    _, spec = flatten(first)
    with pytest.raises(SampleError, match=message):
        compile_flattener(spec)(later)


samples = st.recursive(
    st.none() | st.integers() | st.text(max_size=5) | st.booleans(),
    lambda children: (
        st.lists(children, max_size=3)
        | st.tuples(children, children)
        | st.dictionaries(st.text(max_size=3), children, max_size=3)
    ),
    max_leaves=12,
)


@given(samples)
def test_any_structure_round_trips(sample):
    leaves, spec = flatten(sample)
    assert spec.num_leaves == len(leaves)
    assert compile_unflattener(spec_from_json(spec_to_json(spec)))(leaves) == sample
    assert compile_flattener(spec)(sample) == leaves
