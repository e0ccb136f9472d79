"""``litdata_collate`` batches graphs as LitData does: PyG ``Batch``, or a list of ``Graph``."""

from __future__ import annotations

import pytest
import torch

import litdata as ld
from litdata.engine.items.wrappers import Graph
from litdata.streaming.workers.collate import litdata_collate

pyg_data = pytest.importorskip("torch_geometric.data")


def _graph(nodes: int) -> object:
    return pyg_data.Data(
        x=torch.full((nodes, 2), float(nodes)), edge_index=torch.tensor([[0], [nodes - 1]])
    )


def test_pyg_graphs_become_one_batch():
    batch = litdata_collate([_graph(2), _graph(3)])
    assert isinstance(batch, pyg_data.Batch)
    assert batch.num_graphs == 2
    assert batch.x.shape == (5, 2)
    assert batch.edge_index.tolist() == [[0, 2], [1, 4]]  # the second graph's nodes shifted


def test_graph_values_of_dict_samples_are_batched_and_the_rest_collated():
    batch = litdata_collate([{"id": 0, "graph": _graph(2)}, {"id": 1, "graph": _graph(3)}])
    assert torch.equal(batch["id"], torch.tensor([0, 1]))
    assert isinstance(batch["graph"], pyg_data.Batch)
    assert batch["graph"].num_graphs == 2


def test_hetero_graphs_batch_too():
    graphs = []
    for nodes in (1, 2):
        graph = pyg_data.HeteroData()
        graph["paper"].x = torch.ones(nodes, 3)
        graphs.append(graph)
    batch = litdata_collate(graphs)
    assert batch["paper"].x.shape == (3, 3)


def test_graph_wrappers_stay_a_list():
    graphs = [Graph(x=torch.ones(1, 2)), Graph(x=torch.zeros(2, 2))]
    assert litdata_collate(graphs) == graphs


def test_the_loader_batches_stored_graphs_by_default(tmp_path):
    samples = [{"id": index, "graph": _graph(index + 2)} for index in range(4)]
    ld.write_dataset(samples, tmp_path / "ds", chunk_size=2)
    loader = ld.StreamingDataLoader(ld.StreamingDataset(tmp_path / "ds"), batch_size=2)
    batches = list(loader)
    assert [batch["id"].tolist() for batch in batches] == [[0, 1], [2, 3]]
    assert [batch["graph"].x.shape[0] for batch in batches] == [5, 9]
