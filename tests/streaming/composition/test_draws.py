"""Draws chosen a block at a time are the draws chosen one at a time."""

import numpy as np

from litdata.streaming.composition.draws import Mixer, draws


def one_at_a_time(uniform, weights, active):
    """The rule, draw by draw: the uniform times the active total, less weight after weight."""
    total = sum(w for w, on in zip(weights, active, strict=True) if on)
    target = uniform * total
    last = -1
    for index, (weight, on) in enumerate(zip(weights, active, strict=True)):
        if on:
            last = index
            target -= weight
            if target < 0:
                return index
    return last


def test_a_block_is_the_draws_one_at_a_time():
    rng = np.random.default_rng(0)
    mixer = Mixer(seed=3, epoch=2, worker=1)
    for first in (0, 4000, 10_000):  # across the uniforms' blocks of 4,096
        weights = rng.dirichlet([0.5, 1, 2], size=500)
        active = [True, False, True] if first == 4000 else [True, True, True]
        chosen = mixer.choose(first, weights, active).tolist()
        uniforms = mixer.uniforms(first, 500)
        assert chosen == [
            one_at_a_time(u, w, active) for u, w in zip(uniforms, weights, strict=True)
        ]


def test_draws_end_where_a_drawn_dataset_is_empty_or_everything_is_read():
    mixer = Mixer(seed=1, epoch=1, worker=0)

    def fixed(first, count):
        return np.broadcast_to(np.asarray([0.5, 0.5]), (count, 2))

    sources = np.concatenate([s for s, _ in draws(mixer, [3, 50], [1, 1], False, 0, fixed)])
    assert (sources == 0).sum() == 3  # the fourth draw of dataset 0 ends the mixture
    blocks = list(draws(mixer, [3, 50], [1, 1], True, 0, fixed))
    taken = np.concatenate([t for _, t in blocks])
    every = np.concatenate([s for s, _ in blocks])
    assert taken.sum() == 53
    assert (every == 0).sum() == 3
    per_stream = list(draws(mixer, [5, 20], [4, 8], True, 0, fixed))
    takes = {0: [], 1: []}
    for sources, counts in per_stream:
        for source, count in zip(sources.tolist(), counts.tolist(), strict=True):
            takes[source].append(count)
    assert takes == {0: [4, 1], 1: [8, 8, 4]}
