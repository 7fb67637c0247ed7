//! The candle port of the attention layer: heads split, made contiguous, merged back.

use candle_core::{Module, Result, Tensor, D};
use candle_nn::{linear, Linear, VarBuilder};

pub struct Attention {
    q_proj: Linear,
    k_proj: Linear,
    v_proj: Linear,
    o_proj: Linear,
    num_heads: usize,
    head_dim: usize,
}

impl Attention {
    pub fn new(hidden: usize, num_heads: usize, vb: VarBuilder) -> Result<Self> {
        Ok(Self {
            q_proj: linear(hidden, hidden, vb.pp("q_proj"))?,
            k_proj: linear(hidden, hidden, vb.pp("k_proj"))?,
            v_proj: linear(hidden, hidden, vb.pp("v_proj"))?,
            o_proj: linear(hidden, hidden, vb.pp("o_proj"))?,
            num_heads,
            head_dim: hidden / num_heads,
        })
    }

    fn heads(&self, x: &Tensor, b: usize, t: usize) -> Result<Tensor> {
        x.reshape((b, t, self.num_heads, self.head_dim))?.transpose(1, 2)?.contiguous()
    }

    pub fn forward(&self, xs: &Tensor) -> Result<Tensor> {
        let (b, t, _) = xs.dims3()?;
        let q = self.heads(&self.q_proj.forward(xs)?, b, t)?;
        let k = self.heads(&self.k_proj.forward(xs)?, b, t)?;
        let v = self.heads(&self.v_proj.forward(xs)?, b, t)?;
        let scale = 1.0 / (self.head_dim as f64).sqrt();
        let att = (q.matmul(&k.t()?)? * scale)?;
        let att = candle_nn::ops::softmax(&att, D::Minus1)?;
        let y = att.matmul(&v)?.transpose(1, 2)?.contiguous()?;
        self.o_proj.forward(&y.reshape((b, t, ()))?)
    }
}
