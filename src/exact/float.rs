// TEMPORARY PLACEHOLDER (to be replaced by the rigorous implementation) — DO NOT SHIP.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FI {
    pub lo: f64,
    pub hi: f64,
}
impl FI {
    pub fn new(lo: f64, hi: f64) -> FI {
        FI { lo, hi }
    }
    pub fn point(x: f64) -> FI {
        FI { lo: x, hi: x }
    }
    pub fn from_q(q: &super::Q) -> FI {
        FI {
            lo: super::f64_down(q),
            hi: super::f64_up(q),
        }
    }
    fn w(lo: f64, hi: f64) -> FI {
        FI {
            lo: lo.next_down(),
            hi: hi.next_up(),
        }
    }
    pub fn add(self, o: FI) -> FI {
        FI::w(self.lo + o.lo, self.hi + o.hi)
    }
    pub fn sub(self, o: FI) -> FI {
        FI::w(self.lo - o.hi, self.hi - o.lo)
    }
    pub fn mul(self, o: FI) -> FI {
        let p = [
            self.lo * o.lo,
            self.lo * o.hi,
            self.hi * o.lo,
            self.hi * o.hi,
        ];
        FI::w(
            p.iter().cloned().fold(f64::INFINITY, f64::min),
            p.iter().cloned().fold(f64::NEG_INFINITY, f64::max),
        )
    }
    pub fn div(self, o: FI) -> FI {
        if o.lo <= 0.0 && o.hi >= 0.0 {
            return FI::new(f64::NEG_INFINITY, f64::INFINITY);
        }
        let p = [
            self.lo / o.lo,
            self.lo / o.hi,
            self.hi / o.lo,
            self.hi / o.hi,
        ];
        FI::w(
            p.iter().cloned().fold(f64::INFINITY, f64::min),
            p.iter().cloned().fold(f64::NEG_INFINITY, f64::max),
        )
    }
    pub fn sqr(self) -> FI {
        let a = self.abs();
        FI::w(a.lo * a.lo, a.hi * a.hi).clamp0()
    }
    fn clamp0(self) -> FI {
        FI {
            lo: self.lo.max(0.0),
            hi: self.hi,
        }
    }
    pub fn sqrt(self) -> FI {
        FI::w(self.lo.max(0.0).sqrt(), self.hi.sqrt()).clamp0()
    }
    pub fn neg(self) -> FI {
        FI {
            lo: -self.hi,
            hi: -self.lo,
        }
    }
    pub fn abs(self) -> FI {
        if self.lo >= 0.0 {
            self
        } else if self.hi <= 0.0 {
            self.neg()
        } else {
            FI {
                lo: 0.0,
                hi: self.hi.max(-self.lo),
            }
        }
    }
    pub fn mul_f64(self, c: f64) -> FI {
        self.mul(FI::point(c))
    }
    pub fn contains(&self, x: f64) -> bool {
        self.lo <= x && x <= self.hi
    }
    pub fn exp(self) -> FI {
        FI {
            lo: (self.lo.exp() * (1.0 - 1e-14)).max(0.0),
            hi: self.hi.exp() * (1.0 + 1e-14),
        }
    }
}
