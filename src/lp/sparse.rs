//! The one float LP model: min c'x s.t. rows, x ≥ 0, with its Clarabel adapter (primal and
//! row duals), its MPS writer and its tolerance. A privacy LP lowers to it
//! ([`super::model::PrivacyLp::to_sparse`]) for the interior point method and for
//! `mdp lp export`; ConstOPTMech's reduced LP (Imola et al. 2022 §3.2) is built in it
//! directly. microlp's simplex solves it too, to cross-check small instances. Every answer
//! is only a candidate: the mechanism built from it is repaired and proved private exactly
//! (`spec/lp.md` §4).

use super::error::LpError;
use clarabel::algebra::CscMatrix;
use clarabel::solver::{
    DefaultSettingsBuilder, DefaultSolver, IPSolver, NonnegativeConeT, SolverStatus,
    SupportedConeT, ZeroConeT,
};

/// The sense of a row a'x ? b.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sense {
    Le,
    Ge,
    Eq,
}

/// One row: Σ coef·x\[var\] (sense) rhs.
#[derive(Clone, Debug)]
pub struct Row {
    pub coefs: Vec<(usize, f64)>,
    pub sense: Sense,
    pub rhs: f64,
}

/// min cost'x subject to `rows`, every variable ≥ 0.
#[derive(Clone, Debug, Default)]
pub struct SparseLp {
    pub cost: Vec<f64>,
    pub rows: Vec<Row>,
    /// Names of the variables and rows in MPS (`x{j}`, `r{i}` where empty).
    pub var_names: Vec<String>,
    pub row_names: Vec<String>,
}

/// A float optimum.
#[derive(Clone, Debug)]
pub struct Solution {
    pub x: Vec<f64>,
    pub objective: f64,
    /// The dual of each row, in `rows` order (interior point only; empty from the
    /// simplex): ≥ 0 for an inequality in its ≤ orientation (a ≥ row is negated first),
    /// free for an equality.
    pub duals: Vec<f64>,
}

/// Clarabel's gap and feasibility tolerances.
pub const TOL: f64 = 1e-10;

impl SparseLp {
    /// A new variable with objective coefficient `c`; returns its index.
    pub fn var(&mut self, c: f64) -> usize {
        self.cost.push(c);
        self.cost.len() - 1
    }

    pub fn row(&mut self, coefs: Vec<(usize, f64)>, sense: Sense, rhs: f64) {
        self.rows.push(Row { coefs, sense, rhs });
    }

    pub fn n_vars(&self) -> usize {
        self.cost.len()
    }

    /// Structural non-zeros of the constraint rows (x ≥ 0 bounds not counted).
    pub fn nnz(&self) -> usize {
        self.rows.iter().map(|r| r.coefs.len()).sum()
    }

    /// Solve with Clarabel. Clarabel's form is Ax + s = b, s ∈ {0}^e × R_+^m: equality
    /// rows go to the zero cone, a'x ≤ b as is, a'x ≥ b as −a'x ≤ −b, and x ≥ 0 as −x ≤ 0.
    pub fn solve_ipm(&self) -> Result<Solution, LpError> {
        self.solve_clarabel(true)
    }

    /// [`Self::solve_ipm`] without Clarabel's iterative refinement of each KKT solve (up to
    /// 10 extra triangular solves per direction, to a 10⁻¹³ residual). Used where it was
    /// measured faster with the same bounds: the Benders master and subproblems (500 NYC
    /// road nodes, 5 iterations: 28.9 → 20.4 s; 500 Rome nodes, task 2, 6 iterations:
    /// 64.9 → 48.4 s) and ConstOPTMech's reduced LP (n = 400, r = 10: 0.81× on Rome
    /// nodes, 0.93–0.96× on MiniLM texts; spec/crates.md). Not the default: OPTMech on 50
    /// MiniLM texts at ε = 6 was 13 % slower without it.
    pub fn solve_ipm_unrefined(&self) -> Result<Solution, LpError> {
        self.solve_clarabel(false)
    }

    fn solve_clarabel(&self, refine: bool) -> Result<Solution, LpError> {
        let nv = self.n_vars();
        let (mut ii, mut jj, mut vv, mut b) = (vec![], vec![], vec![], vec![]);
        let mut push = |row: &Row, sign: f64, at: usize| {
            for &(j, a) in &row.coefs {
                ii.push(at);
                jj.push(j);
                vv.push(sign * a);
            }
            sign * row.rhs
        };
        // Clarabel's rows in order: the equalities, then the inequalities; `order[t]` is
        // the index in `rows` of Clarabel's row t.
        let order: Vec<usize> = (0..self.rows.len())
            .filter(|&i| self.rows[i].sense == Sense::Eq)
            .chain((0..self.rows.len()).filter(|&i| self.rows[i].sense != Sense::Eq))
            .collect();
        let n_eq = order
            .iter()
            .take_while(|&&i| self.rows[i].sense == Sense::Eq)
            .count();
        let mut at = 0;
        for &i in &order {
            let r = &self.rows[i];
            let sign = if r.sense == Sense::Ge { -1.0 } else { 1.0 };
            b.push(push(r, sign, at));
            at += 1;
        }
        for j in 0..nv {
            ii.push(at);
            jj.push(j);
            vv.push(-1.0);
            b.push(0.0);
            at += 1;
        }
        let a = CscMatrix::new_from_triplets(at, nv, ii, jj, vv);
        let p = CscMatrix::<f64>::zeros((nv, nv));
        let cones: [SupportedConeT<f64>; 2] = [ZeroConeT(n_eq), NonnegativeConeT(at - n_eq)];
        let settings = DefaultSettingsBuilder::default()
            .verbose(false)
            .tol_gap_abs(TOL)
            .tol_gap_rel(TOL)
            .tol_feas(TOL)
            .iterative_refinement_enable(refine)
            .build()
            .map_err(|e| LpError::Clarabel(format!("settings: {e}")))?;
        let mut solver = DefaultSolver::new(&p, &self.cost, &a, &b, &cones, settings)
            .map_err(|e| LpError::Clarabel(format!("{e:?}")))?;
        solver.solve();
        let s = &solver.solution;
        match s.status {
            SolverStatus::Solved | SolverStatus::AlmostSolved => {
                let mut duals = vec![0.0; self.rows.len()];
                for (t, &i) in order.iter().enumerate() {
                    duals[i] = s.z[t];
                }
                Ok(Solution {
                    x: s.x.clone(),
                    objective: s.obj_val,
                    duals,
                })
            }
            other => Err(LpError::Clarabel(format!("{other:?}"))),
        }
    }

    /// Solve with microlp's simplex (small instances; a cross-check of [`Self::solve_ipm`]).
    pub fn solve_simplex(&self) -> Result<Solution, LpError> {
        use microlp::{ComparisonOp, OptimizationDirection, Problem};
        let mut p = Problem::new(OptimizationDirection::Minimize);
        let vars: Vec<_> = self
            .cost
            .iter()
            .map(|&c| p.add_var(c, (0.0, f64::INFINITY)))
            .collect();
        for r in &self.rows {
            let expr: Vec<_> = r.coefs.iter().map(|&(j, a)| (vars[j], a)).collect();
            let op = match r.sense {
                Sense::Le => ComparisonOp::Le,
                Sense::Ge => ComparisonOp::Ge,
                Sense::Eq => ComparisonOp::Eq,
            };
            p.add_constraint(expr, op, r.rhs);
        }
        let sol = p
            .solve()
            .map_err(|e| LpError::Microlp(e.to_string()))?
            .into_solution()
            .map_err(|_| LpError::Interrupted)?;
        Ok(Solution {
            x: vars.iter().map(|&v| sol.var_value(v)).collect(),
            objective: sol.objective(),
            duals: vec![],
        })
    }

    fn var_name(&self, j: usize) -> String {
        self.var_names
            .get(j)
            .cloned()
            .unwrap_or_else(|| format!("x{j}"))
    }

    fn row_name(&self, i: usize) -> String {
        self.row_names
            .get(i)
            .cloned()
            .unwrap_or_else(|| format!("r{i}"))
    }

    /// Free-format MPS (variables and rows by their names, `x_j` / `r_i` by default;
    /// objective `obj`; x ≥ 0 is MPS's default bound), numbers in shortest round-trip
    /// form, so another solver reads the same doubles (`mdp lp export`, the benchmarks).
    pub fn write_mps(&self, name: &str, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        writeln!(out, "NAME {name}")?;
        writeln!(out, "ROWS")?;
        writeln!(out, " N obj")?;
        for (i, r) in self.rows.iter().enumerate() {
            let t = match r.sense {
                Sense::Le => 'L',
                Sense::Ge => 'G',
                Sense::Eq => 'E',
            };
            writeln!(out, " {t} {}", self.row_name(i))?;
        }
        let mut cols: Vec<Vec<(usize, f64)>> = vec![vec![]; self.n_vars()];
        for (i, r) in self.rows.iter().enumerate() {
            for &(j, a) in &r.coefs {
                cols[j].push((i, a));
            }
        }
        writeln!(out, "COLUMNS")?;
        for (j, col) in cols.iter().enumerate() {
            let x = self.var_name(j);
            if self.cost[j] != 0.0 {
                writeln!(out, " {x} obj {:?}", self.cost[j])?;
            }
            for &(i, a) in col {
                writeln!(out, " {x} {} {a:?}", self.row_name(i))?;
            }
            if col.is_empty() && self.cost[j] == 0.0 {
                writeln!(out, " {x} obj 0")?;
            }
        }
        writeln!(out, "RHS")?;
        for (i, r) in self.rows.iter().enumerate() {
            if r.rhs != 0.0 {
                writeln!(out, " rhs {} {:?}", self.row_name(i), r.rhs)?;
            }
        }
        writeln!(out, "ENDATA")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// min x0 + 2 x1, x0 + x1 ≥ 1, x0 ≤ 0.25 (optimum 1.75): the MPS names every row, column
    /// and rhs.
    #[test]
    fn mps_lists_rows_columns_and_rhs() {
        let mut lp = SparseLp::default();
        let (a, b) = (lp.var(1.0), lp.var(2.0));
        lp.row(vec![(a, 1.0), (b, 1.0)], Sense::Ge, 1.0);
        lp.row(vec![(a, 1.0)], Sense::Le, 0.25);
        let mut out = vec![];
        lp.write_mps("t", &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        for line in [
            " G r0",
            " L r1",
            " x0 obj 1.0",
            " x0 r0 1.0",
            " x0 r1 1.0",
            " x1 obj 2.0",
            " x1 r0 1.0",
            " rhs r0 1.0",
            " rhs r1 0.25",
        ] {
            assert!(
                text.lines().any(|l| l == line),
                "missing {line:?} in\n{text}"
            );
        }
        let sol = lp.solve_simplex().unwrap();
        assert!((sol.objective - 1.75).abs() < 1e-9);
        // The interior point's row duals, in `rows` order: 2 on the ≥ row (in its ≤
        // orientation), 1 on the bound x0 ≤ 0.25.
        let ipm = lp.solve_ipm().unwrap();
        assert!((ipm.objective - 1.75).abs() < 1e-8);
        assert!((ipm.duals[0] - 2.0).abs() < 1e-6, "{:?}", ipm.duals);
        assert!((ipm.duals[1] - 1.0).abs() < 1e-6, "{:?}", ipm.duals);
        // Without iterative refinement: the same optimum and duals.
        let unrefined = lp.solve_ipm_unrefined().unwrap();
        assert!((unrefined.objective - 1.75).abs() < 1e-8);
        for (u, r) in unrefined.duals.iter().zip(&ipm.duals) {
            assert!(
                (u - r).abs() < 1e-6,
                "{:?} vs {:?}",
                unrefined.duals,
                ipm.duals
            );
        }
    }
}
