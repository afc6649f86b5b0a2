//! `pg_size_pretty`: a byte count in the unit PostgreSQL 15 picks, rounded as it
//! rounds (`10239 bytes`, `10 kB`, `20 MB`, up to `PB`), for `bigint` and `numeric`.

use datafusion::common::ScalarValue;

/// A unit: its name, the magnitude below which it is used, whether the value is halved
/// with rounding when it is (the value then carries one extra bit), and its power of two.
struct Unit {
    name: &'static str,
    limit: i128,
    rounds: bool,
    bits: u32,
}

const UNITS: [Unit; 6] = [
    unit("bytes", 10 * 1024, false, 0),
    unit("kB", 20 * 1024 - 1, true, 10),
    unit("MB", 20 * 1024 - 1, true, 20),
    unit("GB", 20 * 1024 - 1, true, 30),
    unit("TB", 20 * 1024 - 1, true, 40),
    unit("PB", 20 * 1024 - 1, true, 50),
];

const fn unit(name: &'static str, limit: i128, rounds: bool, bits: u32) -> Unit {
    Unit {
        name,
        limit,
        rounds,
        bits,
    }
}

/// Halves `n`, rounding halves away from zero.
fn half_rounded(n: i128) -> i128 {
    (n + if n < 0 { -1 } else { 1 }) / 2
}

/// `pg_size_pretty` of a whole number of bytes. Each step divides (truncating toward
/// zero, so negative sizes mirror positive ones) by the bits between two units, keeping
/// one more when the next unit rounds.
pub fn of_bytes(mut size: i128) -> String {
    for (at, unit) in UNITS.iter().enumerate() {
        let Some(next) = UNITS.get(at + 1).filter(|_| size.abs() >= unit.limit) else {
            if unit.rounds {
                size = half_rounded(size);
            }
            return format!("{size} {}", unit.name);
        };
        let shift = next.bits - unit.bits - u32::from(next.rounds) + u32::from(unit.rounds);
        size /= 1i128 << shift;
    }
    // Unreachable: the last unit has no next one.
    format!("{size} PB")
}

/// `pg_size_pretty` of an argument: a `numeric` below 10 kB keeps its digits
/// (`10.5 bytes`), as PostgreSQL's numeric variant prints it; NULL is NULL.
pub fn of_value(value: Option<&ScalarValue>) -> Option<String> {
    match value? {
        ScalarValue::Decimal128(Some(units), precision, scale) => {
            let whole = units / 10i128.pow(u32::try_from(*scale).unwrap_or(0));
            if whole.abs() < UNITS[0].limit {
                let digits = value?.to_string();
                let digits = match (precision, scale) {
                    (&UNCONSTRAINED_PRECISION, &UNCONSTRAINED_SCALE) => trim_scale(&digits),
                    _ => &digits,
                };
                return Some(format!("{digits} bytes"));
            }
            Some(of_bytes(whole))
        }
        other => super::udf::int(Some(other)).map(|bytes| of_bytes(i128::from(bytes))),
    }
}

/// The Arrow type of a `numeric` without a declared precision (see `convert`).
const UNCONSTRAINED_PRECISION: u8 = 38;
const UNCONSTRAINED_SCALE: i8 = 10;

/// A numeric's text without the zeros its column's scale added (`10.5000000000` is
/// `10.5`, `3.0000000000` is `3`), as PostgreSQL prints an unconstrained numeric.
fn trim_scale(digits: &str) -> &str {
    if !digits.contains('.') {
        return digits;
    }
    digits.trim_end_matches('0').trim_end_matches('.')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_pick_postgres_units_and_rounding() {
        // Figures from PostgreSQL 15's pg_size_pretty(bigint).
        for (bytes, pretty) in [
            (0, "0 bytes"),
            (10_239, "10239 bytes"),
            (10_240, "10 kB"),
            (-10_240, "-10 kB"),
            (10_752, "11 kB"),
            (20_971_519, "20 MB"),
            (1_000_000_000_000, "931 GB"),
            (1_000_000_000_000_000, "909 TB"),
            (1_000_000_000_000_000_000, "888 PB"),
            (i128::from(i64::MAX), "8192 PB"),
        ] {
            assert_eq!(of_bytes(bytes), pretty, "{bytes}");
        }
    }
}
