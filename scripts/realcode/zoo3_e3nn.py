"""e3nn 0.6.0: equivariant layers and the example networks at tiny multiplicities, random
weights: Linear, fully connected / elementwise tensor products (their kernels are code that
e3nn generates with torch.fx, outside this tree: only the modules' own calls are sites),
spherical harmonics, Gate, BatchNorm (eval / train statistics), NormActivation, S2 grids,
SphericalTensor / CartesianTensor, ReducedTensorProducts, the gate-points networks (2101,
2106) on 8 random points, and the voxel convolutions (2103, 2104). No attention; train =
batch statistics and gradients on."""

import torch

from zoo3 import Config, klass

NB = 6  # nodes / samples


def _irreps_in(irreps, gen):
    from e3nn import o3

    return torch.randn(NB, o3.Irreps(irreps).dim, generator=gen)


def _mod(dotted, kw, irreps):
    def build(gen, fused):
        m = klass(dotted)(**kw)
        xs = tuple(_irreps_in(i, gen) for i in irreps)
        return m, xs

    return build


def _sh(gen, fused):
    from e3nn import o3

    vec = torch.randn(NB, 3, generator=gen)
    return o3.SphericalHarmonics([0, 1, 2, 3], normalize=True, normalization="component"), vec


def _gate(gen, fused):
    from e3nn import nn

    g = nn.Gate("4x0e+2x0o", [torch.relu, torch.tanh], "2x0e", [torch.sigmoid], "1x1o+1x2e")
    return g, _irreps_in(g.irreps_in, gen)


def _s2(gen, fused):
    from e3nn import o3

    to, fr = o3.ToS2Grid(3, (8, 10)), o3.FromS2Grid((8, 10), 3)
    x = torch.randn(2, NB, 16, generator=gen)
    return torch.nn.ModuleDict(dict(to_grid=to, from_grid=fr)), lambda m: m["from_grid"](m["to_grid"](x))


def _io(gen, fused):
    from e3nn import io

    st = io.SphericalTensor(3, 1, -1)
    ct = io.CartesianTensor("ij=ji")
    sig = torch.randn(NB, st.dim, generator=gen)
    mat = torch.randn(NB, 3, 3, generator=gen)

    def run(m):
        st.signal_xyz(sig, torch.randn(5, 3))
        st.norms(sig)
        st.from_samples_on_s2(torch.randn(5, 3), torch.randn(5))
        t = ct.from_cartesian(mat + mat.transpose(1, 2))
        return ct.to_cartesian(t)

    return torch.nn.Identity(), run


def _rtp(gen, fused):
    from e3nn import o3

    r = o3.ReducedTensorProducts("ij=ji", i="1o")
    x = torch.randn(NB, 3, generator=gen)
    return r, (x, x)


def _gate_points_2101(gen, fused):
    from e3nn.nn.models.gate_points_2101 import Network

    m = Network(irreps_in="2x0e+1x1o", irreps_hidden="4x0e+4x0o+2x1e+2x1o", irreps_out="1x0e+1x1o",
                irreps_node_attr="1x0e", irreps_edge_attr="1x0e+1x1o+1x2e", layers=2, max_radius=2.0,
                number_of_basis=5, radial_layers=1, radial_neurons=8, num_neighbors=3.0, num_nodes=4.0)
    data = dict(pos=torch.randn(8, 3, generator=gen), x=torch.randn(8, 5, generator=gen),
                z=torch.ones(8, 1), batch=torch.tensor([0] * 4 + [1] * 4))
    return m, lambda mm: mm(data)


def _gate_points_2106(gen, fused):
    from e3nn.nn.models.v2106.gate_points_networks import SimpleNetwork

    m = SimpleNetwork(irreps_in="2x0e+1x1o", irreps_out="1x0e+1x1o", max_radius=2.0, num_neighbors=3.0,
                      num_nodes=4.0, mul=4, layers=2, lmax=2)
    data = dict(pos=torch.randn(8, 3, generator=gen), x=torch.randn(8, 5, generator=gen),
                batch=torch.tensor([0] * 4 + [1] * 4))
    return m, lambda mm: mm(data)


def _voxel(version):
    def build(gen, fused):
        mod = klass("e3nn.nn.models.%s.voxel_convolution.Convolution" % version)
        if version == "v2103":
            m = mod("2x0e+1x1o", "2x0e+1x1o", "0e+1o+2e", size=3)
        else:
            m = mod("2x0e+1x1o", "2x0e+1x1o", "0e+1o+2e", diameter=3.0, num_radial_basis=3)
        return m, torch.randn(2, 5, 6, 6, 6, generator=gen)

    return build


def configs():
    O = "e3nn.o3."
    return {
        "Linear": Config(_mod(O + "Linear", dict(irreps_in="4x0e+2x1o+1x2e", irreps_out="2x0e+3x1o+2x2e"),
                              ["4x0e+2x1o+1x2e"])),
        "FullyConnectedTensorProduct": Config(_mod(O + "FullyConnectedTensorProduct",
                                                   dict(irreps_in1="2x0e+1x1o", irreps_in2="1x0e+1x1o",
                                                        irreps_out="2x0e+2x1o+1x2e"),
                                                   ["2x0e+1x1o", "1x0e+1x1o"])),
        "ElementwiseTensorProduct": Config(_mod(O + "ElementwiseTensorProduct",
                                                dict(irreps_in1="2x0e+2x1o", irreps_in2="2x0e+2x1o"),
                                                ["2x0e+2x1o", "2x0e+2x1o"])),
        "FullTensorProduct": Config(_mod(O + "FullTensorProduct", dict(irreps_in1="1x0e+1x1o", irreps_in2="1x1o+1x2e"),
                                         ["1x0e+1x1o", "1x1o+1x2e"])),
        "SphericalHarmonics": Config(_sh),
        "Gate": Config(_gate),
        "BatchNorm": Config(_mod("e3nn.nn.BatchNorm", dict(irreps="4x0e+2x1o+1x2e"), ["4x0e+2x1o+1x2e"]), train=True),
        "BatchNorm-instance": Config(_mod("e3nn.nn.BatchNorm", dict(irreps="4x0e+2x1o+1x2e", instance=True),
                                          ["4x0e+2x1o+1x2e"])),
        "NormActivation": Config(_mod("e3nn.nn.NormActivation",
                                      dict(irreps_in="2x0e+2x1o+1x2e", scalar_nonlinearity=torch.sigmoid),
                                      ["2x0e+2x1o+1x2e"])),
        "S2Grid": Config(_s2),
        "SphericalTensor-CartesianTensor": Config(_io),
        "ReducedTensorProducts": Config(_rtp),
        "gate_points_2101": Config(_gate_points_2101, train=True),
        "gate_points_2106": Config(_gate_points_2106),
        "voxel-v2103": Config(_voxel("v2103")),
        "voxel-v2104": Config(_voxel("v2104")),
    }
