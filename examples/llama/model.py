"""A Llama-style decoder attention with grouped-query heads and eager attention, sized by a
Hugging Face `config.json` (`model.config.json` beside it).

Each layer writes out its key/value broadcast (`expand` then `reshape`: `repeat_kv`
inlined) and merges the heads after `transpose(1, 2)`: three hidden copies per layer.
`stridelint check examples/llama/model.py --model-config examples/llama/model.config.json
--dim bsz=1 --dim q_len=4096` states what they cost per forward pass;
`scripts/oracle/check_model_config_bytes.py` measures the same copies in torch.
"""

import math

import torch
import torch.nn as nn


class LlamaStyleAttention(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.hidden_size = config.hidden_size
        self.num_heads = config.num_attention_heads
        self.head_dim = config.hidden_size // config.num_attention_heads
        self.num_key_value_heads = config.num_key_value_heads
        self.num_key_value_groups = self.num_heads // self.num_key_value_heads
        self.q_proj = nn.Linear(self.hidden_size, self.num_heads * self.head_dim, bias=False)
        self.k_proj = nn.Linear(self.hidden_size, self.num_key_value_heads * self.head_dim, bias=False)
        self.v_proj = nn.Linear(self.hidden_size, self.num_key_value_heads * self.head_dim, bias=False)
        self.o_proj = nn.Linear(self.num_heads * self.head_dim, self.hidden_size, bias=False)

    def forward(self, hidden_states):
        bsz, q_len, _ = hidden_states.size()
        query = self.q_proj(hidden_states).view(bsz, q_len, self.num_heads, self.head_dim).transpose(1, 2)
        key = self.k_proj(hidden_states).view(bsz, q_len, self.num_key_value_heads, self.head_dim).transpose(1, 2)
        value = self.v_proj(hidden_states).view(bsz, q_len, self.num_key_value_heads, self.head_dim).transpose(1, 2)

        shape = (bsz, self.num_key_value_heads, self.num_key_value_groups, q_len, self.head_dim)
        key = key[:, :, None, :, :].expand(shape).reshape(bsz, self.num_heads, q_len, self.head_dim)
        value = value[:, :, None, :, :].expand(shape).reshape(bsz, self.num_heads, q_len, self.head_dim)

        scores = (query @ key.transpose(2, 3)) / math.sqrt(self.head_dim)
        weights = torch.softmax(scores, dim=-1)
        out = (weights @ value).transpose(1, 2).reshape(bsz, q_len, self.hidden_size)
        return self.o_proj(out)
