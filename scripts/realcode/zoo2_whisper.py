"""openai-whisper 20250625: Whisper built from a tiny ModelDimensions (random weights), its
forward, greedy decoding and language detection (the tokenizer's files ship in the package),
and the log-mel front end; attention "eager" / "fused" = `MultiHeadAttention.use_sdpa`."""

import torch

from zoo2 import B, Config, randn

MELS, FRAMES = 80, 32  # the encoder's two convolutions halve 32 frames into 16 audio positions


def _dims(n_vocab=100, layers=2):
    from whisper.model import ModelDimensions

    return ModelDimensions(n_mels=MELS, n_audio_ctx=FRAMES // 2, n_audio_state=32, n_audio_head=4,
                           n_audio_layer=layers, n_vocab=n_vocab, n_text_ctx=16, n_text_state=32, n_text_head=4,
                           n_text_layer=layers)


def _model(fused, **kw):
    from whisper.model import MultiHeadAttention, Whisper

    MultiHeadAttention.use_sdpa = bool(fused)
    return Whisper(_dims(**kw))


def _forward(gen, fused):
    mel = randn(B, MELS, FRAMES, gen=gen)
    tokens = torch.randint(0, 100, (B, 8), generator=gen)
    return _model(fused), (mel, tokens)


def _decode(gen, fused):
    import whisper

    model = _model(fused, n_vocab=51865)  # the multilingual tokenizer's vocabulary
    mel = randn(B, MELS, FRAMES, gen=gen)
    opts = whisper.DecodingOptions(language="en", fp16=False, sample_len=4)
    return model, lambda m: whisper.decode(m, mel, opts)


def _decode_timestamps(gen, fused):
    import whisper

    model = _model(fused, n_vocab=51865)
    mel = randn(B, MELS, FRAMES, gen=gen)
    opts = whisper.DecodingOptions(language="en", fp16=False, sample_len=4, without_timestamps=False)
    return model, lambda m: whisper.decode(m, mel, opts)


def _detect_language(gen, fused):
    model = _model(fused, n_vocab=51865)
    mel = randn(B, MELS, FRAMES, gen=gen)
    return model, lambda m: m.detect_language(mel)


def _encoder(gen, fused):
    return _model(fused).encoder, randn(B, MELS, FRAMES, gen=gen)


def _log_mel(gen, fused):
    import whisper

    audio = randn(B, 1600, gen=gen)
    return torch.nn.Identity(), lambda m: whisper.log_mel_spectrogram(audio, n_mels=MELS)


def configs():
    return {
        "Whisper": Config(_forward, attn=True),
        "AudioEncoder": Config(_encoder, attn=True),
        "Whisper-decode-greedy": Config(_decode, attn=True),
        "Whisper-decode-timestamps": Config(_decode_timestamps, attn=True),
        "Whisper-detect-language": Config(_detect_language, attn=True),
        "log_mel_spectrogram": Config(_log_mel),
    }
