//! Fuzz the user-level readers and exact computations: JSON-lines users (labels and
//! indices) on a 6-site explicit space, d_EM of consecutive users (transport, and the
//! Lemma 2.1 assignment when sizes agree: the two must be equal), and the shuffle
//! accountant on parsed parameters, closed form, numerical or the tighter (never a panic; a
//! guarantee never above composition; a returned inverse meets its target).
#![no_main]
use libfuzzer_sys::fuzz_target;
use mdp::exact::{parse_rational, Q};
use mdp::metric::Space;
use mdp::user_level::emd::{assignment, emd, Histogram};
use mdp::user_level::shuffle::{self, Accountant, Model};
use mdp::user_level::users::{for_each_user, ItemNames};
use mdp::user_level::Budget;

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    if mode % 2 == 0 {
        let d = [
            [0u32, 1, 2, 3, 3, 4],
            [1, 0, 1, 2, 2, 3],
            [2, 1, 0, 1, 1, 2],
            [3, 2, 1, 0, 2, 1],
            [3, 2, 1, 2, 0, 3],
            [4, 3, 2, 1, 3, 0],
        ];
        let space = Space::from_table(
            d.iter()
                .map(|r| r.iter().map(|&x| Q::from(x)).collect())
                .collect(),
        )
        .unwrap();
        let labels: Vec<String> = ["a", "b", "c", "d", "e", "f"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let names = ItemNames::new(6, Some(&labels));
        let mut prev: Option<Vec<usize>> = None;
        let _ = for_each_user(rest, &names, |user| {
            let items = user.items;
            assert!(!items.is_empty() && items.iter().all(|&x| x < 6));
            if let Some(p) = prev.take() {
                let mut budget = Budget::new(2_000_000);
                let (hp, hi) = (
                    Histogram::from_items(&p, 6).unwrap(),
                    Histogram::from_items(&items, 6).unwrap(),
                );
                if let Ok(v) = emd(&space, &hp, &hi, &mut budget) {
                    assert!(v.is_point() && v.lo >= 0u32 && v.lo <= 4u32);
                    if p.len() == items.len() {
                        if let Ok((a, _)) = assignment(&space, &p, &items, &mut budget) {
                            assert_eq!(a, v.lo);
                        }
                    }
                }
            }
            prev = Some(items);
            Ok(())
        });
    } else {
        let text = String::from_utf8_lossy(rest);
        let parts: Vec<&str> = text.split(',').collect();
        if parts.len() != 4 {
            return;
        }
        let (Ok(a), Ok(delta)) = (
            parse_rational(parts[0].trim()),
            parse_rational(parts[1].trim()),
        ) else {
            return;
        };
        let (Ok(n), Ok(m)) = (
            parts[2].trim().parse::<u64>(),
            parts[3].trim().parse::<u64>(),
        ) else {
            return;
        };
        if a.bits() > 4096 || delta.bits() > 4096 {
            return;
        }
        let model = if n == 0 {
            Model::Local { m }
        } else {
            Model::Central { n, m }
        };
        // The accountant from the mode byte: closed, numerical or the tighter of both.
        let acc = [
            Accountant::Closed,
            Accountant::Numerical,
            Accountant::Tighter,
        ][(mode as usize / 2) % 3];
        if let Ok(g) = shuffle::item_wise(model, &a, &delta, acc) {
            // Never above composition's m·α₀ (the slope is capped at α₀).
            assert!(g.alpha <= Q::from(m) * &a && g.delta < 1u32);
        }
        if let Ok(g) = shuffle::fmt_group(model, &a, &delta, acc) {
            assert!(g.alpha <= Q::from(m) * &a);
        }
        if let (Ok(n_items), true) = (model.n_items(), m >= 1) {
            let _ = shuffle::hybrid(n_items, &a, &delta, &Q::from(1u32), 1, acc);
        }
        if let Ok(inv) = shuffle::max_alpha0(model, &a, &delta, acc) {
            assert!(inv.guarantee.alpha <= a && inv.guarantee.delta <= delta);
        }
    }
});
