"""torch-geometric 2.8.1: message-passing layers and models on one random graph (two graphs of
6 and 4 nodes batched, 16 features, 30 random edges, 3-d positions, 4 edge features, 3 relation
types), random weights: the attention convolutions (GAT, GATv2, Transformer, RGAT, SuperGAT,
HGT, HAN, HEAT, AGNN, FA, EG, General), relational / point / mixture convolutions (RGCN, DNA,
GMM, Point Transformer, PointNet, XConv, FeaSt, PNA, hypergraph), pooling (TopK, SAG, ASAP,
edge pooling, MemPool, DMoN), aggregations (quantile, sort, LCM, set transformer), and the
models GAT / GIN / GraphUNet / SchNet (all-pairs interaction graph: the radius graph needs
pyg-lib, not installed) / GPS / Polynormer / SGFormer. No attention
switch; train = dropout and gradients on. PyG generates each layer's `propagate` from a
template into a file outside this tree: only the tree's own calls (message, update, the
layers' forward) are sites."""

import torch

from zoo3 import Config, klass

N, C, E = 10, 16, 30


def _graph(gen):
    src = torch.randint(0, N, (E,), generator=gen)
    dst = torch.randint(0, N, (E,), generator=gen)
    return dict(x=torch.randn(N, C, generator=gen), edge_index=torch.stack([src, dst]),
                edge_attr=torch.randn(E, 4, generator=gen), pos=torch.randn(N, 3, generator=gen),
                edge_type=torch.randint(0, 3, (E,), generator=gen),
                batch=torch.tensor([0] * 6 + [1] * 4))


def _conv(name, kw, call=("x", "edge_index"), extra=None):
    def build(gen, fused):
        g = _graph(gen)
        m = klass("torch_geometric.nn." + name)(**kw)
        args = tuple(g[a] for a in call)
        if extra:
            return m, lambda mm: mm(*args, **extra(g))
        return m, args

    return build


def _hgt(han=False):
    def build(gen, fused):
        nn = klass("torch_geometric.nn.HANConv" if han else "torch_geometric.nn.HGTConv")
        meta = (["a", "b"], [("a", "to", "b"), ("b", "to", "a"), ("a", "self", "a")])
        x = {"a": torch.randn(6, C, generator=gen), "b": torch.randn(4, C, generator=gen)}
        ei = {("a", "to", "b"): torch.stack([torch.randint(0, 6, (12,), generator=gen),
                                             torch.randint(0, 4, (12,), generator=gen)]),
              ("b", "to", "a"): torch.stack([torch.randint(0, 4, (12,), generator=gen),
                                             torch.randint(0, 6, (12,), generator=gen)]),
              ("a", "self", "a"): torch.stack([torch.randint(0, 6, (8,), generator=gen),
                                               torch.randint(0, 6, (8,), generator=gen)])}
        m = nn(C, C, metadata=meta, heads=2)
        return m, (x, ei)

    return build


def _pool(name, kw):
    def build(gen, fused):
        g = _graph(gen)
        m = klass("torch_geometric.nn." + name)(**kw)
        return m, lambda mm: mm(g["x"], g["edge_index"], batch=g["batch"])

    return build


def _aggr(name, kw):
    def build(gen, fused):
        g = _graph(gen)
        m = klass("torch_geometric.nn.aggr." + name)(**kw)
        return m, lambda mm: mm(g["x"], g["batch"])

    return build


def _model(name, kw, call=("x", "edge_index"), batch=False):
    def build(gen, fused):
        g = _graph(gen)
        m = klass("torch_geometric.nn.models." + name)(**kw)
        args = tuple(g[a] for a in call)
        return m, (lambda mm: mm(*args, batch=g["batch"])) if batch else args

    return build


def _schnet(gen, fused):
    g = _graph(gen)
    m = klass("torch_geometric.nn.models.SchNet")(hidden_channels=16, num_filters=16, num_interactions=2,
                                                  num_gaussians=10, cutoff=5.0, interaction_graph=_full_graph)
    z = torch.randint(1, 10, (N,), generator=gen)
    return m, (z, g["pos"] * 2, g["batch"])


def _full_graph(pos, batch):
    """Every pair of distinct nodes of one graph (SchNet's radius graph needs pyg-lib)."""
    same = (batch[:, None] == batch[None, :]) & ~torch.eye(len(batch), dtype=torch.bool)
    row, col = same.nonzero().t()
    return torch.stack([row, col]), (pos[row] - pos[col]).norm(dim=-1)


def _dense(gen, fused):
    from torch_geometric.nn import DenseGATConv, DMoNPooling

    x = torch.randn(2, 6, C, generator=gen)
    adj = (torch.rand(2, 6, 6, generator=gen) > 0.5).float()
    m = torch.nn.ModuleDict(dict(gat=DenseGATConv(C, 8, heads=2), pool=DMoNPooling([C, 8], k=3)))
    return m, lambda mm: (mm["gat"](x, adj), mm["pool"](x, adj))


def _gps(gen, fused):
    from torch_geometric.nn import GINConv, GPSConv

    g = _graph(gen)
    m = GPSConv(C, GINConv(torch.nn.Linear(C, C)), heads=4, attn_type="multihead")
    return m, lambda mm: mm(g["x"], g["edge_index"], batch=g["batch"])


def _gps_performer(gen, fused):
    from torch_geometric.nn import GINConv, GPSConv

    g = _graph(gen)
    m = GPSConv(C, GINConv(torch.nn.Linear(C, C)), heads=4, attn_type="performer")
    return m, lambda mm: mm(g["x"], g["edge_index"], batch=g["batch"])


def configs():
    ea = ("x", "edge_index", "edge_attr")
    return {
        "GATConv": Config(_conv("GATConv", dict(in_channels=C, out_channels=8, heads=2)), train=True),
        "GATConv-edge-attr-mean": Config(_conv("GATConv", dict(in_channels=C, out_channels=8, heads=2, concat=False,
                                                               edge_dim=4), call=ea)),
        "GATv2Conv": Config(_conv("GATv2Conv", dict(in_channels=C, out_channels=8, heads=2, edge_dim=4), call=ea),
                            train=True),
        "TransformerConv": Config(_conv("TransformerConv", dict(in_channels=C, out_channels=8, heads=2, edge_dim=4,
                                                                beta=True), call=ea), train=True),
        "RGATConv": Config(_conv("RGATConv", dict(in_channels=C, out_channels=8, num_relations=3, heads=2),
                                 call=("x", "edge_index", "edge_type"))),
        "RGATConv-additive-across": Config(_conv("RGATConv", dict(
            in_channels=C, out_channels=8, num_relations=3, heads=2, attention_mode="multiplicative-self-attention",
            attention_mechanism="across-relation", dim=2), call=("x", "edge_index", "edge_type"))),
        "RGCNConv-bases": Config(_conv("RGCNConv", dict(in_channels=C, out_channels=8, num_relations=3, num_bases=2),
                                       call=("x", "edge_index", "edge_type"))),
        "RGCNConv-blocks": Config(_conv("RGCNConv", dict(in_channels=C, out_channels=8, num_relations=3,
                                                         num_blocks=4), call=("x", "edge_index", "edge_type"))),
        "FastRGCNConv": Config(_conv("FastRGCNConv", dict(in_channels=C, out_channels=8, num_relations=3,
                                                          num_bases=2), call=("x", "edge_index", "edge_type"))),
        "SuperGATConv": Config(_conv("SuperGATConv", dict(in_channels=C, out_channels=8, heads=2)), train=True),
        "HGTConv": Config(_hgt()),
        "HANConv": Config(_hgt(han=True)),
        "HEATConv": Config(_conv("HEATConv", dict(in_channels=C, out_channels=8, num_node_types=2, num_edge_types=3,
                                                  edge_type_emb_dim=4, edge_dim=4, edge_attr_emb_dim=4, heads=2),
                                 extra=lambda g: dict(node_type=(g["batch"]).long(), edge_type=g["edge_type"],
                                                      edge_attr=g["edge_attr"]))),
        "DNAConv": Config(_dna),
        "GMMConv": Config(_conv("GMMConv", dict(in_channels=C, out_channels=8, dim=4, kernel_size=3), call=ea)),
        "GeneralConv-attention": Config(_conv("GeneralConv", dict(in_channels=C, out_channels=8, heads=2,
                                                                  attention=True, in_edge_channels=4), call=ea)),
        "EGConv": Config(_conv("EGConv", dict(in_channels=C, out_channels=C, num_heads=2, num_bases=2))),
        "PNAConv": Config(_conv("PNAConv", dict(in_channels=C, out_channels=C, aggregators=["mean", "max", "std"],
                                                scalers=["identity", "amplification"], deg=torch.tensor([1, 3, 4, 2]),
                                                edge_dim=4, towers=2), call=ea)),
        "PointTransformerConv": Config(_conv("PointTransformerConv", dict(in_channels=C, out_channels=8),
                                             call=("x", "pos", "edge_index"))),
        "FeaStConv": Config(_conv("FeaStConv", dict(in_channels=C, out_channels=8, heads=2))),
        "HypergraphConv-attention": Config(_conv("HypergraphConv", dict(in_channels=C, out_channels=8,
                                                                        use_attention=True, heads=2),
                                                 extra=lambda g: dict(hyperedge_attr=torch.randn(N, C)))),
        "AGNNConv": Config(_conv("AGNNConv", dict())),
        "ChebConv": Config(_conv("ChebConv", dict(in_channels=C, out_channels=8, K=3))),
        "TAGConv": Config(_conv("TAGConv", dict(in_channels=C, out_channels=8))),
        "ARMAConv": Config(_conv("ARMAConv", dict(in_channels=C, out_channels=8, num_stacks=2, num_layers=2))),
        "MixHopConv": Config(_conv("MixHopConv", dict(in_channels=C, out_channels=8))),
        "TopKPooling": Config(_pool("TopKPooling", dict(in_channels=C, ratio=0.5))),
        "SAGPooling": Config(_pool("SAGPooling", dict(in_channels=C, ratio=0.5))),
        "ASAPooling": Config(_pool("ASAPooling", dict(in_channels=C, ratio=0.5))),
        "EdgePooling": Config(_pool("EdgePooling", dict(in_channels=C))),
        "MemPooling": Config(_mempool),
        "DenseGAT-DMoN": Config(_dense),
        "QuantileAggregation": Config(_aggr("QuantileAggregation", dict(q=[0.25, 0.5]))),
        "SortAggregation": Config(_aggr("SortAggregation", dict(k=3))),
        "LCMAggregation": Config(_aggr("LCMAggregation", dict(in_channels=C, out_channels=8))),
        "SetTransformerAggregation": Config(_aggr("SetTransformerAggregation", dict(channels=C, heads=2))),
        "GAT": Config(_model("GAT", dict(in_channels=C, hidden_channels=16, num_layers=2, heads=2, v2=True)),
                      train=True),
        "GIN-jk": Config(_model("GIN", dict(in_channels=C, hidden_channels=16, num_layers=2, jk="cat"))),
        "GraphUNet": Config(_model("GraphUNet", dict(in_channels=C, hidden_channels=16, out_channels=4, depth=2),
                                   batch=True)),
        "SchNet": Config(_schnet),
        "GPSConv-multihead": Config(_gps, train=True),
        "GPSConv-performer": Config(_gps_performer),
        "Polynormer": Config(_model("Polynormer", dict(in_channels=C, hidden_channels=16, out_channels=4,
                                                       local_layers=1, global_layers=1, heads=2), batch=True)),
        "SGFormer": Config(_model("SGFormer", dict(in_channels=C, hidden_channels=16, out_channels=4,
                                                   trans_num_layers=1, trans_num_heads=2, gnn_num_layers=1),
                                  batch=True)),
    }


def _dna(gen, fused):
    g = _graph(gen)
    m = klass("torch_geometric.nn.DNAConv")(channels=C, heads=2, groups=2)
    return m, (torch.randn(N, 3, C, generator=gen), g["edge_index"])


def _mempool(gen, fused):
    g = _graph(gen)
    m = klass("torch_geometric.nn.MemPooling")(in_channels=C, out_channels=8, heads=2, num_clusters=3)
    return m, lambda mm: mm(g["x"], g["batch"])
