"""chronos-forecasting 2.3.2: the three model families from tiny configs (d_model 32, 4 heads
of 8, 2 layers, context 32, patches of 4): Chronos-2 (its own encoder: time / group attention,
RoPE; "eager" / "fused" = `attn_implementation` "eager" / "sdpa"), Chronos-Bolt (patching
over transformers' T5, same switch) and the original Chronos (mean-scale bins tokenizer over
a T5 of transformers). Forward passes (train: with future targets, gradients on) and the
pipelines' predict / predict_quantiles / embed. The T5 stacks are transformers' code, outside
this tree: only chronos' own calls are sites."""

import torch

from zoo3 import B, Config, randn

CTX, PRED, PATCH = 32, 8, 4
Q = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]  # the pipelines unroll these


def _attn(fused):
    return "sdpa" if fused else "eager"


def _chronos2(fused, **kw):
    from chronos.chronos2.config import Chronos2CoreConfig
    from chronos.chronos2.model import Chronos2Model

    cc = dict(context_length=CTX, output_patch_size=PATCH, input_patch_size=PATCH, input_patch_stride=PATCH,
              quantiles=Q, use_reg_token=True, max_output_patches=4)
    cc.update(kw)
    cfg = Chronos2CoreConfig(d_model=32, d_kv=8, d_ff=64, num_layers=2, num_heads=4, attn_implementation=_attn(fused),
                             chronos_config=cc)
    return Chronos2Model(cfg)


def _c2_forward(covariates):
    def build(gen, fused):
        m = _chronos2(fused)
        ctx = randn(4, CTX, gen=gen)
        ctx[0, :5] = float("nan")
        groups = torch.tensor([0, 0, 1, 1])
        kw = dict(context=ctx, group_ids=groups, num_output_patches=2)
        if covariates:
            fut = randn(4, 2 * PATCH, gen=gen)
            fut[0] = float("nan")
            kw.update(future_covariates=fut, future_target=randn(4, 2 * PATCH, gen=gen))
        return m, kw

    return build


def _c2_pipeline(gen, fused):
    from chronos.chronos2.pipeline import Chronos2Pipeline

    m = _chronos2(fused)
    series = randn(B, 3, 40, gen=gen)
    single = [randn(30, gen=gen), randn(20, gen=gen)]

    def run(model):
        p = Chronos2Pipeline(model)
        p.predict(series, prediction_length=PRED)
        p.predict_quantiles(single, prediction_length=PRED, quantile_levels=[0.1, 0.5])
        p.predict(series, prediction_length=PRED, cross_learning=True)
        return p.embed(single)

    return m, run


def _bolt(fused):
    from transformers import T5Config

    from chronos.chronos_bolt import ChronosBoltModelForForecasting

    cfg = T5Config(d_model=32, d_kv=8, d_ff=64, num_layers=2, num_decoder_layers=2, num_heads=4, vocab_size=2,
                   decoder_start_token_id=0,
                   chronos_config=dict(context_length=CTX, prediction_length=PRED, input_patch_size=PATCH,
                                       input_patch_stride=PATCH, quantiles=Q, use_reg_token=True))
    cfg._attn_implementation = _attn(fused)
    return ChronosBoltModelForForecasting(cfg)


def _bolt_forward(gen, fused):
    ctx = randn(B, CTX - 3, gen=gen)  # not a multiple of the patch: the patcher pads
    ctx[1, :4] = float("nan")
    return _bolt(fused), dict(context=ctx, target=randn(B, PRED, gen=gen))


def _bolt_pipeline(gen, fused):
    from chronos.chronos_bolt import ChronosBoltPipeline

    series = [randn(40, gen=gen), randn(25, gen=gen)]

    def run(model):
        p = ChronosBoltPipeline(model)
        p.predict(series, prediction_length=2 * PRED)  # longer than the model's: autoregressive
        p.predict_quantiles(series, prediction_length=PRED, quantile_levels=[0.2, 0.5])
        return p.embed(series)

    return _bolt(fused), run


def _chronos(gen, fused):
    from transformers import T5Config, T5ForConditionalGeneration

    from chronos.chronos import ChronosConfig, ChronosModel, ChronosPipeline

    cc = ChronosConfig(tokenizer_class="MeanScaleUniformBins", tokenizer_kwargs=dict(low_limit=-15.0, high_limit=15.0),
                       context_length=CTX, prediction_length=PRED, n_tokens=64, n_special_tokens=2, pad_token_id=0,
                       eos_token_id=1, use_eos_token=True, model_type="seq2seq", num_samples=3, temperature=1.0,
                       top_k=50, top_p=1.0)
    t5 = T5Config(d_model=32, d_kv=8, d_ff=64, num_layers=2, num_decoder_layers=2, num_heads=4, vocab_size=64,
                  pad_token_id=0, eos_token_id=1, decoder_start_token_id=0)
    t5._attn_implementation = _attn(fused)
    inner = T5ForConditionalGeneration(t5)
    model = ChronosModel(cc, inner)
    series = [randn(40, gen=gen), randn(20, gen=gen)]

    def run(m):
        p = ChronosPipeline(tokenizer=cc.create_tokenizer(), model=m)
        p.predict(series, prediction_length=PRED)
        p.predict_quantiles(series, prediction_length=PRED, quantile_levels=[0.5])
        return p.embed(series)

    return model, run


def configs():
    return {
        "Chronos2Model": Config(_c2_forward(False), attn=True, train=True),
        "Chronos2Model-covariates": Config(_c2_forward(True), attn=True, train=True),
        "Chronos2Pipeline": Config(_c2_pipeline, attn=True),
        "ChronosBoltModelForForecasting": Config(_bolt_forward, attn=True, train=True),
        "ChronosBoltPipeline": Config(_bolt_pipeline, attn=True),
        "ChronosPipeline": Config(_chronos, attn=True),
    }
