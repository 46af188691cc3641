//! The mechanism: an n × K matrix of exact non-negative rationals whose row u is the
//! (unnormalized) output distribution for input u (Imola et al. §2, the stochastic
//! matrix M). The auditor works on the exactly row-normalized matrix H (contract:
//! "Privacy is checked on the row-normalized matrix").

use crate::exact::Q;

/// A dense row-major matrix of exact rationals.
#[derive(Clone, Debug, PartialEq)]
pub struct Matrix {
    pub rows: usize,
    pub cols: usize,
    pub data: Vec<Q>,
}

impl Matrix {
    pub fn new(rows: usize, cols: usize, data: Vec<Q>) -> Matrix {
        assert_eq!(data.len(), rows * cols);
        Matrix { rows, cols, data }
    }
    pub fn get(&self, r: usize, c: usize) -> &Q {
        &self.data[r * self.cols + c]
    }
    pub fn row(&self, r: usize) -> &[Q] {
        &self.data[r * self.cols..(r + 1) * self.cols]
    }
    /// Exact row sums.
    pub fn row_sums(&self) -> Vec<Q> {
        use rayon::prelude::*;
        (0..self.rows)
            .into_par_iter()
            .map(|r| crate::exact::sum_tree(self.row(r).to_vec()))
            .collect()
    }
}

/// What the columns of a mechanism are (contract, "outputs").
#[derive(Clone, Debug, PartialEq)]
pub enum Outputs {
    /// The inputs themselves (square matrix).
    Inputs,
    /// Column k is input `i_k` (Qiu's perturbed set O ⊆ R).
    OfInputs(Vec<usize>),
    /// Column k is a point of the input metric's kind.
    Points(Vec<Vec<Q>>),
    /// Opaque outputs; losses need `loss.cost`.
    Labels(Vec<String>),
}

impl Outputs {
    /// Number of outputs, if the variant determines it.
    pub fn len(&self, n_inputs: usize) -> usize {
        match self {
            Outputs::Inputs => n_inputs,
            Outputs::OfInputs(v) => v.len(),
            Outputs::Points(v) => v.len(),
            Outputs::Labels(v) => v.len(),
        }
    }
}
