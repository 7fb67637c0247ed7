"""demucs 4.1.0: HTDemucs (hybrid transformer), HDemucs (hybrid / spectrogram only) and the
waveform Demucs at tiny widths (8 channels, depth 2-3, nfft 512; HDemucs 4096 on 1 s) on 0.25 s of
stereo audio at 8 kHz; HTDemucs in eval and train (its cross-domain transformer's augmentations and sparse
attention switch differ)."""

from zoo2 import B, Config, constructed, randn

SR = 8000
SOURCES = ["drums", "bass"]


def _audio(n=SR // 4):
    return lambda gen: randn(B, 2, n, gen=gen)


HT = dict(sources=SOURCES, audio_channels=2, channels=8, depth=2, nfft=512, t_layers=1, t_heads=2, t_hidden_scale=2.0,
          dconv_comp=4, samplerate=SR, segment=0.25, bottom_channels=0)
# a hybrid HDemucs needs the default nfft and depth (its time and frequency branches must line up)
HD = dict(sources=SOURCES, audio_channels=2, channels=4, depth=6, dconv_comp=4, dconv_attn=2, dconv_lstm=2,
          samplerate=SR, segment=1)

# name -> (class, kwargs, input maker, train differs)
SPECS = {
    "HTDemucs": ("demucs.htdemucs.HTDemucs", HT, _audio(), True),
    "HTDemucs-bottom-cac0": ("demucs.htdemucs.HTDemucs", dict(HT, bottom_channels=16, cac=False), _audio(), False),
    "HTDemucs-cape-groupnorm": ("demucs.htdemucs.HTDemucs", dict(HT, t_emb="cape", t_norm_in_group=True,
                                                                    t_group_norm=True, t_layers=2), _audio(), True),
    "HTDemucs-scaled-emb": ("demucs.htdemucs.HTDemucs", dict(HT, t_emb="scaled", norm_starts=1), _audio(), False),
    "HDemucs": ("demucs.hdemucs.HDemucs", HD, _audio(SR), False),
    "HDemucs-freq-only": ("demucs.hdemucs.HDemucs", dict(HD, hybrid=False), _audio(SR), False),
    "HDemucs-cac0": ("demucs.hdemucs.HDemucs", dict(HD, cac=False), _audio(SR), False),
    "Demucs": ("demucs.demucs.Demucs", dict(sources=SOURCES, audio_channels=2, channels=8, depth=3, samplerate=SR,
                                              segment=0.25, dconv_attn=2, dconv_lstm=2), _audio(), False),
    "Demucs-lstm-noglu": ("demucs.demucs.Demucs", dict(sources=SOURCES, audio_channels=2, channels=8, depth=2,
                                                         samplerate=SR, segment=0.25, lstm_layers=1, glu=False,
                                                         resample=False), _audio(), False),
}


def configs():
    return {name: Config(constructed(*spec[:3]), train=spec[3]) for name, spec in SPECS.items()}
