import pytest

import litdata as ld


@pytest.fixture(scope="module")
def corpora(tmp_path_factory):
    a = tmp_path_factory.mktemp("a")
    b = tmp_path_factory.mktemp("b")
    ld.write_dataset(({"id": i, "source": 0} for i in range(600)), a, chunk_size=50)
    ld.write_dataset(({"id": 10_000 + i, "source": 1} for i in range(300)), b, chunk_size=50)
    return a, b


def mixture(corpora, **options):
    a, b = corpora
    return ld.CombinedStreamingDataset(
        [ld.StreamingDataset(a, shuffle=True), ld.StreamingDataset(b, shuffle=True)], **options
    )


EVERYTHING = sorted([*range(600), *range(10_000, 10_300)])


def _take(loader, count=None):
    out = []
    for batch in loader:
        out.append([int(i) for i in batch["id"]])
        if count is not None and len(out) == count:
            return out, loader.state_dict()
    return out, None


@pytest.mark.parametrize("workers", [0, 2])
def test_iterate_over_all_reads_everything_once(corpora, workers):
    dataset = mixture(corpora)
    assert len(dataset) == 900
    loader = ld.StreamingDataLoader(dataset, batch_size=16, num_workers=workers)
    batches, _ = _take(loader)
    assert len(batches) == len(loader)
    assert sorted(i for b in batches for i in b) == EVERYTHING


def test_weights_set_the_mixture(corpora):
    dataset = mixture(corpora, weights=[0.25, 0.75], iterate_over_all=False, seed=3)
    ids = [sample["id"] for sample in dataset]
    share = sum(1 for i in ids if i >= 10_000) / len(ids)
    assert 0.65 < share < 0.85
    assert len(set(ids)) == len(ids)
    with pytest.raises(TypeError, match="no fixed length"):
        len(dataset)


def test_default_weights_follow_sizes(corpora):
    assert mixture(corpora).weights == pytest.approx([2 / 3, 1 / 3])


def test_per_stream_batches_come_from_one_dataset(corpora):
    dataset = mixture(corpora, batching_method="per_stream")
    loader = ld.StreamingDataLoader(dataset, batch_size=20, num_workers=2)
    batches = list(loader)
    assert all(len(set(batch["source"].tolist())) == 1 for batch in batches)
    assert sorted(int(i) for b in batches for i in b["id"]) == EVERYTHING


def test_per_dataset_batch_sizes(corpora):
    dataset = mixture(corpora, batching_method="per_stream")
    loader = ld.StreamingDataLoader(dataset, batch_size=10)
    dataset.set_batch_size([10, 30])
    seen = {0: set(), 1: set()}
    for batch in loader:
        seen[int(batch["source"][0])].add(len(batch["id"]))
    assert max(seen[0]) == 10
    assert max(seen[1]) == 30


@pytest.mark.parametrize("stop", [2, 20])
def test_exact_resume(corpora, stop):
    whole, _ = _take(ld.StreamingDataLoader(mixture(corpora), batch_size=16, num_workers=2))
    head, state = _take(
        ld.StreamingDataLoader(mixture(corpora), batch_size=16, num_workers=2), stop
    )
    resumed = ld.StreamingDataLoader(mixture(corpora), batch_size=16, num_workers=2)
    resumed.load_state_dict(state)
    tail, _ = _take(resumed)
    assert head + tail == whole


@pytest.mark.parametrize("after", [1, 3])
def test_elastic_resume_of_a_weighted_mixture(corpora, after):
    options = {"weights": [0.4, 0.6], "iterate_over_all": False, "seed": 11}
    head, state = _take(
        ld.StreamingDataLoader(mixture(corpora, **options), batch_size=16, num_workers=2), 8
    )
    resumed = ld.StreamingDataLoader(mixture(corpora, **options), batch_size=16, num_workers=after)
    resumed.load_state_dict(state)
    tail, _ = _take(resumed)
    seen = [i for b in head for i in b]
    rest = [i for b in tail for i in b]
    assert len(set(seen) | set(rest)) == len(seen) + len(rest)  # no sample twice
    assert set(seen + rest) <= set(EVERYTHING)
    share = sum(1 for i in rest if i >= 10_000) / len(rest)
    assert 0.45 < share < 0.75  # the rest keeps the mixture


@pytest.mark.parametrize("after", [1, 3])
def test_elastic_resume_reads_everything_left(corpora, after):
    head, state = _take(ld.StreamingDataLoader(mixture(corpora), batch_size=16, num_workers=2), 9)
    resumed = ld.StreamingDataLoader(mixture(corpora), batch_size=16, num_workers=after)
    resumed.load_state_dict(state)
    tail, _ = _take(resumed)
    assert sorted([i for b in head for i in b] + [i for b in tail for i in b]) == EVERYTHING


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"weights": [0.5, 0.5]}, "iterate_over_all=True"),
        ({"weights": [1.0], "iterate_over_all": False}, "1 entries for 2 datasets"),
        ({"weights": [-0.5, 1.5], "iterate_over_all": False}, "non-negative"),
        ({"batching_method": "random"}, "batching_method"),
    ],
)
def test_bad_mixtures(corpora, options, message):
    with pytest.raises(ValueError, match=message):
        mixture(corpora, **options)


def test_weights_are_normalised_as_litdata_does(corpora):
    assert mixture(corpora, weights=[2, 0.5], iterate_over_all=False).weights == [0.8, 0.2]


def test_per_dataset_batch_sizes_need_one_size_per_dataset(corpora):
    with pytest.raises(ValueError, match="one per dataset"):
        ld.StreamingDataLoader(mixture(corpora), batch_size=[4])


def test_empty_or_foreign_datasets(corpora, tmp_path):
    a, _ = corpora
    ld.write_dataset([{"id": 1}], tmp_path, chunk_size=1)
    empty = ld.StreamingDataset(tmp_path).subset([])
    with pytest.raises(ValueError, match="is empty"):
        ld.CombinedStreamingDataset([ld.StreamingDataset(a), empty])
    with pytest.raises(RuntimeError, match="combines StreamingDatasets"):
        ld.CombinedStreamingDataset([ld.StreamingDataset(a), [1, 2]])
    with pytest.raises(ValueError, match="at least one"):
        ld.CombinedStreamingDataset([])


def test_a_state_for_another_mixture_is_refused(corpora):
    _, state = _take(ld.StreamingDataLoader(mixture(corpora), batch_size=16), 2)
    a, _ = corpora
    single = ld.StreamingDataLoader(
        ld.CombinedStreamingDataset([ld.StreamingDataset(a, shuffle=True)]), batch_size=16
    )
    two_into_one = r"of 2 datasets, but it is loaded into a CombinedStreamingDataset of 1"
    with pytest.raises(ValueError, match=two_into_one):
        single.load_state_dict(state)
    alone = ld.StreamingDataLoader(ld.StreamingDataset(a, shuffle=True), batch_size=16)
    mixture_into_one = r"state of a CombinedStreamingDataset of 2 .* loaded into a StreamingDataset"
    with pytest.raises(ValueError, match=mixture_into_one):
        alone.load_state_dict(state)


def test_a_single_dataset_state_loaded_into_a_mixture_says_so(corpora):
    a, _ = corpora
    _, state = _take(ld.StreamingDataLoader(ld.StreamingDataset(a), batch_size=16), 2)
    one_into_two = (
        r"a single StreamingDataset, but it is loaded into a CombinedStreamingDataset of 2"
    )
    with pytest.raises(ValueError, match=one_into_two):
        ld.StreamingDataLoader(mixture(corpora), batch_size=16).load_state_dict(state)


@pytest.mark.parametrize("state", [{}, {"num_samples_yielded": 3}, [1, 2], None])
def test_a_state_that_is_no_loader_state_is_named(corpora, state):
    loader = ld.StreamingDataLoader(mixture(corpora), batch_size=16)
    with pytest.raises(ValueError, match=r"needs what StreamingDataLoader.state_dict\(\) returned"):
        loader.load_state_dict(state)
