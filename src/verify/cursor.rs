//! A row-major odometer over strided dimensions that carries the storage offset along, so
//! that walking a layout costs one addition per step instead of one division per dimension.
//!
//! The CPU engine starts one cursor per parallel task (the only place it divides) and then
//! only advances it.

use super::plan::Dim;

/// Position in the row-major walk over `dims` and the storage offset it maps to.
#[derive(Debug, Clone)]
pub struct Cursor<'a> {
    dims: &'a [Dim],
    index: Vec<u64>,
    offset: i64,
}

impl<'a> Cursor<'a> {
    /// The cursor at row-major position `linear` of `dims`, for a walk that starts at storage
    /// offset `base`. `linear` may equal the element count (the end position).
    pub fn at(dims: &'a [Dim], base: i64, linear: u64) -> Self {
        let mut index = vec![0u64; dims.len()];
        let mut offset = base;
        let mut rest = linear;
        for (slot, dim) in index.iter_mut().zip(dims).rev() {
            *slot = rest % dim.size;
            rest /= dim.size;
            offset += *slot as i64 * dim.stride;
        }
        Cursor {
            dims,
            index,
            offset,
        }
    }

    /// Storage offset of the current position.
    pub fn offset(&self) -> i64 {
        self.offset
    }

    /// Moves to the next row-major position (wrapping to the start after the last one).
    pub fn advance(&mut self) {
        for (slot, dim) in self.index.iter_mut().zip(self.dims).rev() {
            *slot += 1;
            self.offset += dim.stride;
            if *slot < dim.size {
                return;
            }
            self.offset -= dim.stride * dim.size as i64;
            *slot = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn advancing_visits_the_same_offsets_as_starting_anew() {
        let dims = [
            Dim {
                size: 3,
                stride: -7,
            },
            Dim { size: 2, stride: 0 },
            Dim { size: 4, stride: 5 },
        ];
        let mut cursor = Cursor::at(&dims, 100, 0);
        for linear in 0..24 {
            assert_eq!(cursor.offset(), Cursor::at(&dims, 100, linear).offset());
            cursor.advance();
        }
        // Wrapped around to the start.
        assert_eq!(cursor.offset(), 100);
    }

    #[test]
    fn no_dimensions_is_a_single_position() {
        let mut cursor = Cursor::at(&[], 9, 0);
        assert_eq!(cursor.offset(), 9);
        cursor.advance();
        assert_eq!(cursor.offset(), 9);
    }
}
