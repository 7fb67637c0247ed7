//! The text scan behind both frontends' pre-filters: does a text contain any of a fixed set
//! of tokens (as substrings, comments and strings included)? One Aho-Corasick automaton,
//! built on first use, reads each byte once.

use std::sync::OnceLock;

use aho_corasick::AhoCorasick;

/// A fixed token list and its automaton.
pub struct TokenFilter {
    tokens: &'static [&'static str],
    automaton: OnceLock<Option<AhoCorasick>>,
}

impl TokenFilter {
    pub const fn new(tokens: &'static [&'static str]) -> Self {
        TokenFilter {
            tokens,
            automaton: OnceLock::new(),
        }
    }

    /// Whether `text` contains any of the tokens. If the automaton somehow cannot be built
    /// (fixed literals never make that happen) every text passes: parsing it is the safe
    /// answer.
    pub fn matches(&self, text: &str) -> bool {
        match self.automaton() {
            Some(automaton) => automaton.is_match(text.as_bytes()),
            None => true,
        }
    }

    fn automaton(&self) -> Option<&AhoCorasick> {
        self.automaton
            .get_or_init(|| AhoCorasick::new(self.tokens).ok())
            .as_ref()
    }
}
