"""speechbrain 1.1.2: its model lobes and layers at tiny sizes (d_model 32, 4 heads, 2
layers), random weights: TransformerASR with each encoder (transformer, conformer,
branchformer) and attention type (regular MHA, RelPosMHAXL, RoPE MHA, HyperMixing), SepFormer
(dual path) and RE-SepFormer separators, Conv-TasNet's mask net, ECAPA-TDNN, x-vector,
ResNet, CRDNN, the recurrent layers (LiGRU, SLiGRU, QuasiRNN, complex and quaternion LSTMs),
the seq2seq attentions with the attentional RNN decoder, HiFi-GAN, the random projection
quantiser, feature extraction (Fbank, MFCC, STFT/ISTFT) and the PIT loss. No attention switch
that changes the layout path (RoPE MHA always calls SDPA); train = dropout and gradients on.
torchaudio is a stand-in (zoo3.before_import)."""

import importlib

import torch

from zoo3 import B, Config, klass, randn

T, F, D = 24, 20, 32  # frames, features, model width


def _asr(encoder="transformer", attention="regularMHA", **kw):
    def build(gen, fused):
        args = dict(tgt_vocab=30, input_size=F, d_model=D, nhead=4, num_encoder_layers=2, num_decoder_layers=2,
                    d_ffn=64, dropout=0.1, encoder_module=encoder, attention_type=attention, kernel_size=7,
                    csgu_linear_units=64, causal=False, normalize_before=encoder != "transformer")
        if attention == "RelPosMHAXL":
            args["positional_encoding"] = "fixed_abs_sine" if encoder == "transformer" else None
        args.update(kw)
        m = klass("speechbrain.lobes.models.transformer.TransformerASR.TransformerASR")(**args)
        src = randn(B, T, F, gen=gen)
        tgt = torch.randint(1, 30, (B, 6), generator=gen)
        return m, (src, tgt, torch.tensor([1.0, 0.75]))

    return build


def _sepformer(gen, fused):
    dp = importlib.import_module("speechbrain.lobes.models.dual_path")
    intra = dp.SBTransformerBlock(num_layers=1, d_model=D, nhead=4, d_ffn=64, use_positional_encoding=True)
    inter = dp.SBTransformerBlock(num_layers=1, d_model=D, nhead=4, d_ffn=64, use_positional_encoding=True)
    enc = dp.Encoder(kernel_size=16, out_channels=D)
    net = dp.Dual_Path_Model(in_channels=D, out_channels=D, intra_model=intra, inter_model=inter, num_layers=1,
                             K=25, num_spks=2)
    dec = dp.Decoder(in_channels=D, out_channels=1, kernel_size=16, stride=8, bias=False)
    mix = randn(B, 800, gen=gen)

    def run(m):
        w = m["enc"](mix)
        est = m["net"](w)
        sep = torch.stack([w] * 2) * est
        return torch.cat([m["dec"](sep[i]).unsqueeze(-1) for i in range(2)], dim=-1)

    return torch.nn.ModuleDict(dict(enc=enc, net=net, dec=dec)), run


def _dual_path_rnn(gen, fused):
    dp = importlib.import_module("speechbrain.lobes.models.dual_path")
    intra = dp.SBRNNBlock(input_size=D, hidden_channels=16, num_layers=1, bidirectional=True)
    inter = dp.SBRNNBlock(input_size=D, hidden_channels=16, num_layers=1, bidirectional=True)
    net = dp.Dual_Path_Model(in_channels=D, out_channels=D, intra_model=intra, inter_model=inter, num_layers=1,
                             K=10, num_spks=2)
    return net, randn(B, D, 60, gen=gen)


def _resepformer(gen, fused):
    rs = importlib.import_module("speechbrain.lobes.models.resepformer")
    seg = rs.SBTransformerBlock_wnormandskip(num_layers=1, d_model=D, nhead=4, d_ffn=64, use_positional_encoding=True)
    mem = rs.SBTransformerBlock_wnormandskip(num_layers=1, d_model=D, nhead=4, d_ffn=64, use_positional_encoding=True)
    m = rs.ResourceEfficientSeparator(input_dim=D, causal=False, num_spk=2, layer=2, unit=D, segment_size=8,
                                      mem_type="av", seg_model=seg, mem_model=mem)
    return m, randn(B, D, 40, gen=gen)


def _masknet(gen, fused):
    m = klass("speechbrain.lobes.models.conv_tasnet.MaskNet")(N=16, B=8, H=16, P=3, X=2, R=1, C=2)
    return m, randn(B, 16, 20, gen=gen)


def _seq(dotted, kw, shape):
    def build(gen, fused):
        return klass(dotted)(**kw), randn(*shape, gen=gen)

    return build


def _attn_decoder(attn_type):
    def build(gen, fused):
        kw = dict(channels=4, kernel_size=5) if attn_type == "location" else {}
        m = klass("speechbrain.nnet.RNN.AttentionalRNNDecoder")(
            rnn_type="gru", attn_type=attn_type, hidden_size=D, attn_dim=16, num_layers=1, enc_dim=D,
            input_size=16, **kw)
        return m, (randn(B, 5, 16, gen=gen), randn(B, T, D, gen=gen), torch.tensor([1.0, 0.6]))

    return build


def _hifigan(gen, fused):
    m = klass("speechbrain.lobes.models.HifiGAN.HifiganGenerator")(
        in_channels=F, out_channels=1, resblock_type="1", resblock_dilation_sizes=[[1, 3, 5], [1, 3, 5]],
        resblock_kernel_sizes=[3, 5], upsample_kernel_sizes=[8, 8], upsample_initial_channel=32,
        upsample_factors=[4, 4])
    return m, randn(B, F, 10, gen=gen)


def _features(name, kw):
    def build(gen, fused):
        m = klass("speechbrain.lobes.features." + name)(**kw)
        return m, randn(B, 1600, gen=gen)

    return build


def _stft_istft(gen, fused):
    from speechbrain.processing.features import ISTFT, STFT, spectral_magnitude

    stft, istft = STFT(sample_rate=16000, n_fft=512), ISTFT(sample_rate=16000, n_fft=512)
    wav = randn(B, 1600, gen=gen)
    multi = randn(B, 1600, 2, gen=gen)

    def run(m):
        s = stft(wav)
        spectral_magnitude(s)
        istft(s, sig_length=1600)
        s2 = stft(multi)
        return istft(s2, sig_length=1600)

    return torch.nn.Identity(), run


def _pit(gen, fused):
    from speechbrain.nnet.losses import get_si_snr_with_pitwrapper, get_snr_with_pitwrapper

    est, src = randn(B, 800, 2, gen=gen), randn(B, 800, 2, gen=gen)
    return torch.nn.Identity(), lambda m: (get_si_snr_with_pitwrapper(src, est), get_snr_with_pitwrapper(src, est))


def _losses(gen, fused):
    from speechbrain.nnet import losses

    logp = torch.log_softmax(randn(B, T, 10, gen=gen), -1)
    logp5 = torch.log_softmax(randn(B, 5, 10, gen=gen), -1)
    tgt = torch.randint(1, 10, (B, 5), generator=gen)
    lens, tlens = torch.tensor([1.0, 0.8]), torch.tensor([1.0, 0.6])

    def run(m):
        losses.ctc_loss(logp, tgt, lens, tlens, blank_index=0)
        losses.nll_loss(logp5, tgt, length=tlens, label_smoothing=0.1)
        losses.kldiv_loss(logp5, tgt, length=tlens, label_smoothing=0.1)
        losses.bce_loss(randn(B, 5, gen=gen), (tgt > 4).float(), length=tlens)
        return losses.mse_loss(logp, logp.detach() + 1, length=lens)

    return torch.nn.Identity(), run


def _ctc_decode(gen, fused):
    from speechbrain.decoders.ctc import CTCBeamSearcher, ctc_greedy_decode

    logp = torch.log_softmax(randn(B, T, 10, gen=gen), -1)

    def run(m):
        ctc_greedy_decode(logp, torch.tensor([1.0, 0.8]), blank_id=0)
        s = CTCBeamSearcher(blank_index=0, vocab_list=[str(i) for i in range(10)], beam_size=3)
        return s(logp, torch.tensor([1.0, 0.8]))

    return torch.nn.Identity(), run


def _quantiser(gen, fused):
    m = klass("speechbrain.nnet.quantisers.RandomProjectionQuantizer")(input_dim=F, cb_dim=16, cb_vocab=32)
    return m, randn(B, T, F, gen=gen)


def configs():
    L = "speechbrain.lobes.models."
    N = "speechbrain.nnet."
    return {
        "TransformerASR-transformer-regularMHA": Config(_asr(), train=True),
        "TransformerASR-transformer-causal-prenorm": Config(_asr(causal=True, normalize_before=True)),
        "TransformerASR-transformer-RelPosMHAXL": Config(_asr(attention="RelPosMHAXL"), train=True),
        "TransformerASR-transformer-RoPEMHA": Config(_asr(attention="RoPEMHA", positional_encoding=None)),
        "TransformerASR-transformer-hypermixing": Config(_asr(attention="hypermixing")),
        "TransformerASR-conformer-RelPosMHAXL": Config(_asr("conformer", "RelPosMHAXL"), train=True),
        "TransformerASR-conformer-regularMHA": Config(_asr("conformer", "regularMHA")),
        "TransformerASR-branchformer-RelPosMHAXL": Config(_asr("branchformer", "RelPosMHAXL"), train=True),
        "SepFormer": Config(_sepformer, train=True),
        "DualPath-RNN": Config(_dual_path_rnn),
        "RE-SepFormer": Config(_resepformer),
        "ConvTasNet-MaskNet": Config(_masknet),
        "ECAPA_TDNN": Config(_seq(L + "ECAPA_TDNN.ECAPA_TDNN",
                                  dict(input_size=F, lin_neurons=16, channels=[16, 16, 16, 16, 48],
                                       attention_channels=8, res2net_scale=4, se_channels=8),
                                  (B, T, F)), train=True),
        "Xvector": Config(_seq(L + "Xvector.Xvector", dict(tdnn_channels=[16, 16, 16, 16, 48], lin_neurons=16,
                                                        in_channels=F), (B, T, F))),
        "ResNet": Config(_seq(L + "ResNet.ResNet", dict(input_size=F, channels=[8, 8, 16, 16], block_sizes=[1, 1, 1, 1],
                                                     lin_neurons=16), (B, T, F))),
        "CRDNN": Config(_seq(L + "CRDNN.CRDNN", dict(input_shape=[B, T, F], cnn_channels=[8, 16], rnn_layers=1,
                                                  rnn_neurons=16, dnn_blocks=1, dnn_neurons=16), (B, T, F)),
                        train=True),
        "LiGRU": Config(_seq(N + "RNN.LiGRU", dict(hidden_size=16, input_shape=[B, T, F], num_layers=2,
                                                bidirectional=True), (B, T, F))),
        "SLiGRU": Config(_seq(N + "RNN.SLiGRU", dict(hidden_size=16, input_shape=[B, T, F], num_layers=2,
                                                  bidirectional=True), (B, T, F))),
        "QuasiRNN": Config(_seq(N + "RNN.QuasiRNN", dict(hidden_size=16, input_shape=[B, T, F], num_layers=2,
                                                      bidirectional=True), (B, T, F))),
        "LSTM-4d-input": Config(_seq(N + "RNN.LSTM", dict(hidden_size=16, input_shape=[B, T, 4, 5], num_layers=1),
                                     (B, T, 4, 5))),
        "CLSTM": Config(_seq(N + "complex_networks.c_RNN.CLSTM", dict(hidden_size=8, input_shape=[B, T, F],
                                                                   bidirectional=True), (B, T, F))),
        "CLiGRU": Config(_seq(N + "complex_networks.c_RNN.CLiGRU", dict(hidden_size=8, input_shape=[B, T, F]),
                              (B, T, F))),
        "QLSTM": Config(_seq(N + "quaternion_networks.q_RNN.QLSTM", dict(hidden_size=8, input_shape=[B, T, F],
                                                                      bidirectional=True), (B, T, F))),
        "QLiGRU": Config(_seq(N + "quaternion_networks.q_RNN.QLiGRU", dict(hidden_size=8, input_shape=[B, T, F]),
                              (B, T, F))),
        "AttentionalRNNDecoder-content": Config(_attn_decoder("content")),
        "AttentionalRNNDecoder-location": Config(_attn_decoder("location")),
        "AttentionalRNNDecoder-keyvalue": Config(_attn_decoder("keyvalue")),
        "HifiganGenerator": Config(_hifigan),
        "RandomProjectionQuantizer": Config(_quantiser),
        "Fbank": Config(_features("Fbank", dict(n_mels=F, deltas=True, context=True))),
        "MFCC": Config(_features("MFCC", dict(n_mels=F, n_mfcc=13))),
        "STFT-ISTFT": Config(_stft_istft),
        "losses": Config(_losses),
        "PitWrapper-si-snr": Config(_pit),
        "CTC-decoders": Config(_ctc_decode),
    }
