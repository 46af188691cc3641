//! Applying a mechanism to records (`mdp privatize`): each input line names an input (its
//! 0-based index, or its label when labels are given); the output line is the sampled
//! output (index or label). Seeded (ChaCha20), streaming: one record in, one out.
//!
//! Samplers: a mechanism *file*, sampled from its exactly normalized rows rounded to `f64`
//! (Walker's alias method per row, built on first use), and the two mechanisms whose
//! sampler is not a matrix: TEM's Algorithm 3 and Madlib.

use crate::exact::{f64_nearest, Q};
use crate::mechanism::Matrix;
use crate::mechanisms::madlib::Madlib;
use crate::mechanisms::tem::TemSampler;
use rand::Rng;
use std::collections::HashMap;
use std::io::{BufRead, Write};

/// Walker's alias table for one discrete distribution.
pub struct Alias {
    prob: Vec<f64>,
    alias: Vec<usize>,
}

impl Alias {
    /// From non-negative weights with a positive sum.
    pub fn new(weights: &[f64]) -> Alias {
        let k = weights.len();
        let total: f64 = weights.iter().sum();
        let mut prob: Vec<f64> = weights.iter().map(|w| w * k as f64 / total).collect();
        let mut alias = vec![0; k];
        let (mut small, mut large): (Vec<usize>, Vec<usize>) = (0..k).partition(|&i| prob[i] < 1.0);
        while let (Some(s), Some(&l)) = (small.pop(), large.last()) {
            alias[s] = l;
            prob[l] -= 1.0 - prob[s];
            if prob[l] < 1.0 {
                large.pop();
                small.push(l);
            }
        }
        for i in small.into_iter().chain(large) {
            prob[i] = 1.0; // numerical leftovers
        }
        Alias { prob, alias }
    }

    pub fn sample<R: Rng>(&self, rng: &mut R) -> usize {
        let i = rng.gen_range(0..self.prob.len());
        if rng.gen::<f64>() < self.prob[i] {
            i
        } else {
            self.alias[i]
        }
    }
}

/// Anything that draws an output index for an input index.
pub enum Sampler {
    /// Rows of a mechanism matrix (alias tables built lazily).
    Matrix {
        matrix: Matrix,
        tables: HashMap<usize, Alias>,
    },
    Tem(TemSampler),
    Madlib(Madlib),
}

impl Sampler {
    pub fn from_matrix(matrix: Matrix) -> Sampler {
        Sampler::Matrix {
            matrix,
            tables: HashMap::new(),
        }
    }

    pub fn sample<R: Rng>(&mut self, w: usize, rng: &mut R) -> usize {
        match self {
            Sampler::Matrix { matrix, tables } => tables
                .entry(w)
                .or_insert_with(|| {
                    let row = matrix.row(w);
                    let s: Q = row.iter().sum();
                    let h: Vec<f64> = row.iter().map(|x| f64_nearest(&(x / &s))).collect();
                    Alias::new(&h)
                })
                .sample(rng),
            Sampler::Tem(t) => t.sample(w, rng),
            Sampler::Madlib(m) => m.sample(w, rng),
        }
    }
}

/// A record that names no input.
#[derive(Debug)]
pub struct RecordError {
    pub line: usize,
    pub message: String,
}

/// Stream `input` → `output`: each non-empty line names an input (index, or a label of
/// `inputs`); writes the sampled output (a label of `outputs` if given, else the index).
/// Returns the number of records. Stops at the first bad record (the lines before it are
/// already written; the error names the line).
pub fn privatize<R: Rng>(
    sampler: &mut Sampler,
    n: usize,
    inputs: Option<&[String]>,
    outputs: Option<&[String]>,
    input: impl BufRead,
    mut output: impl Write,
    rng: &mut R,
) -> Result<usize, RecordError> {
    let index: HashMap<&str, usize> = inputs
        .map(|l| l.iter().enumerate().map(|(i, s)| (s.as_str(), i)).collect())
        .unwrap_or_default();
    let mut count = 0;
    for (i, line) in input.lines().enumerate() {
        let err = |message: String| RecordError {
            line: i + 1,
            message,
        };
        let line = line.map_err(|e| err(format!("cannot read: {e}")))?;
        let rec = line.trim();
        if rec.is_empty() {
            continue;
        }
        let w = match index.get(rec) {
            Some(&w) => w,
            None => match rec.parse::<usize>() {
                Ok(w) if w < n => w,
                Ok(w) => return Err(err(format!("input index {w} out of range 0..{n}"))),
                Err(_) => return Err(err(format!("unknown input {rec:?}"))),
            },
        };
        let y = sampler.sample(w, rng);
        let written = match outputs {
            Some(l) => writeln!(output, "{}", l[y]),
            None => writeln!(output, "{y}"),
        };
        written.map_err(|e| err(format!("cannot write: {e}")))?;
        count += 1;
    }
    output.flush().map_err(|e| RecordError {
        line: 0,
        message: format!("cannot write: {e}"),
    })?;
    Ok(count)
}
