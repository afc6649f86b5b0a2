//! `to_char` of a number, with PostgreSQL's numeric template patterns: `9` (a digit,
//! blank when a leading zero), `0` (a digit, zero kept), `.`/`D` (the decimal point),
//! `,`/`G` (a group separator, blank before the first digit), `S`, `MI`, `PL`, `SG`,
//! `PR` (signs), `TH`/`th` (ordinal suffix), `V`, `EEEE`, `RN`, `L` (the currency
//! symbol, blank in the C locale), `FM` (no padding, no trailing zeros in `9`
//! positions) and quoted text.
//!
//! The value is rounded half away from zero to the template's decimal positions; one
//! with more integer digits than the template has positions is shown as `#`s, as
//! PostgreSQL shows it. Without a sign pattern, a place before the first digit holds
//! `-` or a blank. `EEEE` writes scientific notation (with digit and point patterns
//! only, 42601 otherwise), `RN` Roman numerals, and `V` shifts the value left by the
//! digit positions after it.

use super::sql_error::{SqlError, SqlResult};
use bigdecimal::num_bigint::Sign;
use bigdecimal::{BigDecimal, RoundingMode};
use std::str::FromStr;

/// One element of a numeric template.
#[derive(Debug, Clone, PartialEq)]
enum Part {
    /// A digit position: `0` keeps a leading zero.
    Digit {
        zero: bool,
    },
    Point,
    Group,
    /// `S`, `MI`, `PL`, `SG`: the sign written at this place.
    Sign(SignPattern),
    Ordinal {
        upper: bool,
    },
    Currency,
    /// `EEEE`: the number in scientific notation.
    Exponent,
    /// `RN`/`rn`: the number in Roman numerals.
    Roman {
        upper: bool,
    },
    /// `V`: the value is multiplied by ten for each digit position after it.
    Shift,
    Text(String),
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum SignPattern {
    /// `S`: `+` or `-`.
    Either,
    /// `MI`: `-` or a blank.
    Minus,
    /// `PL`: `+` or a blank.
    Plus,
    /// `SG`: `+` or `-`, not anchored.
    Signed,
}

struct Template {
    parts: Vec<Part>,
    fill_mode: bool,
    angle_brackets: bool,
}

impl Template {
    fn parse(template: &str) -> SqlResult<Template> {
        let mut parts = Vec::new();
        let mut fill_mode = false;
        let mut angle_brackets = false;
        let mut rest = template;
        while let Some(c) = rest.chars().next() {
            let upper = rest.to_ascii_uppercase();
            let (part, length) = match c {
                '9' => (Some(Part::Digit { zero: false }), 1),
                '0' => (Some(Part::Digit { zero: true }), 1),
                '.' => (Some(Part::Point), 1),
                ',' => (Some(Part::Group), 1),
                '"' => {
                    let end = rest[1..].find('"').map_or(rest.len(), |i| i + 2);
                    let text = rest[1..end].trim_end_matches('"').to_string();
                    (Some(Part::Text(text)), end)
                }
                _ if upper.starts_with("FM") => {
                    fill_mode = true;
                    (None, 2)
                }
                _ if upper.starts_with("PR") => {
                    angle_brackets = true;
                    (None, 2)
                }
                _ if upper.starts_with("MI") => (Some(Part::Sign(SignPattern::Minus)), 2),
                _ if upper.starts_with("PL") => (Some(Part::Sign(SignPattern::Plus)), 2),
                _ if upper.starts_with("SG") => (Some(Part::Sign(SignPattern::Signed)), 2),
                _ if upper.starts_with("TH") => (
                    Some(Part::Ordinal {
                        upper: rest.starts_with('T'),
                    }),
                    2,
                ),
                _ if upper.starts_with("EEEE") => (Some(Part::Exponent), 4),
                _ if upper.starts_with("RN") => (
                    Some(Part::Roman {
                        upper: rest.starts_with('R'),
                    }),
                    2,
                ),
                'V' | 'v' => (Some(Part::Shift), 1),
                'S' | 's' => (Some(Part::Sign(SignPattern::Either)), 1),
                'D' | 'd' => (Some(Part::Point), 1),
                'G' | 'g' => (Some(Part::Group), 1),
                'L' | 'l' => (Some(Part::Currency), 1),
                other => (Some(Part::Text(other.to_string())), other.len_utf8()),
            };
            parts.extend(part);
            rest = &rest[length..];
        }
        Ok(Template {
            parts,
            fill_mode,
            angle_brackets,
        })
    }

    fn digits_before_point(&self) -> usize {
        self.parts
            .iter()
            .take_while(|p| **p != Part::Point)
            .filter(|p| matches!(p, Part::Digit { .. }))
            .count()
    }

    fn digits_after_point(&self) -> usize {
        self.parts
            .iter()
            .skip_while(|p| **p != Part::Point)
            .filter(|p| matches!(p, Part::Digit { .. }))
            .count()
    }

    /// The index, among the digit positions before the point, of the first `0`.
    fn zero_start(&self) -> Option<usize> {
        self.parts
            .iter()
            .take_while(|p| **p != Part::Point)
            .filter(|p| matches!(p, Part::Digit { .. }))
            .position(|p| *p == Part::Digit { zero: true })
    }
}

/// `to_char(number, template)`; `number` is a decimal's text (`-12.5`, `1e20`).
pub fn format(number: &str, template: &str) -> SqlResult<String> {
    let template = Template::parse(template)?;
    let value = BigDecimal::from_str(number.trim())
        .map_err(|_| SqlError::internal(format!("to_char of a non-number {number}")))?;
    if let Some(upper) = template.parts.iter().find_map(|p| match p {
        Part::Roman { upper } => Some(*upper),
        _ => None,
    }) {
        return Ok(roman(&value, upper, template.fill_mode));
    }
    if template.parts.contains(&Part::Exponent) {
        let only_digits = template
            .parts
            .iter()
            .all(|p| matches!(p, Part::Digit { .. } | Part::Point | Part::Exponent));
        if !only_digits || template.fill_mode || template.angle_brackets {
            return Err(SqlError::syntax(
                "\"EEEE\" is incompatible with other formats: it may only be used \
                 together with digit and decimal point patterns",
            ));
        }
        return Ok(scientific(&value, &template));
    }
    let shift = template
        .parts
        .iter()
        .skip_while(|p| **p != Part::Shift)
        .filter(|p| matches!(p, Part::Digit { .. }))
        .count();
    let value = value * BigDecimal::from(10i64.pow(shift.min(18) as u32));
    let before = template.digits_before_point();
    let after = template.digits_after_point();
    let rounded = value
        .abs()
        .with_scale_round(after as i64, RoundingMode::HalfUp);
    let negative = value.sign() == Sign::Minus && rounded.sign() != Sign::NoSign;
    let text = rounded.to_plain_string();
    let (whole, fraction) = text.split_once('.').unwrap_or((&text, ""));
    // A number below 1 shows no integer digit where the template has decimals.
    let whole = if whole == "0" && after > 0 { "" } else { whole };
    let overflow = whole.len() > before;
    let spaces = before.saturating_sub(whole.len());
    let zero_start = template.zero_start();
    // The sign's place before the first digit holds `-` or a blank, `+` or `-` for an
    // `S` written before the digits (anchored to them), `<` or a blank for `PR`; it
    // is not there when `MI`, `SG` or an `S` after the digits writes the sign.
    let first_digit = template
        .parts
        .iter()
        .position(|p| matches!(p, Part::Digit { .. } | Part::Point))
        .unwrap_or(0);
    let anchored = template.parts[..first_digit]
        .iter()
        .position(|p| *p == Part::Sign(SignPattern::Either));
    let signed_elsewhere = template.parts.iter().enumerate().any(|(i, p)| {
        matches!(p, Part::Sign(SignPattern::Minus | SignPattern::Signed))
            || (*p == Part::Sign(SignPattern::Either) && Some(i) != anchored)
    });
    let slot = match (anchored, template.angle_brackets) {
        (Some(_), _) => Some(if negative { '-' } else { '+' }),
        (None, true) => Some(if negative { '<' } else { ' ' }),
        (None, false) if signed_elsewhere => None,
        (None, false) if negative => Some('-'),
        (None, false) if template.fill_mode => None,
        (None, false) => Some(' '),
    };
    let mut out = String::new();
    let mut sign_written = false;
    let mut started = false;
    let mut digit = 0usize;
    let mut decimal = 0usize;
    let mut after_point = false;
    let fraction: Vec<char> = fraction.chars().collect();
    let mut write_sign = |out: &mut String, started: &mut bool| {
        if !sign_written {
            sign_written = true;
            out.extend(slot);
        }
        *started = true;
    };
    for (index, part) in template.parts.iter().enumerate() {
        match part {
            Part::Sign(_) if Some(index) == anchored => {}
            Part::Digit { .. } if after_point => {
                write_sign(&mut out, &mut started);
                out.push(if overflow {
                    '#'
                } else {
                    fraction.get(decimal).copied().unwrap_or('0')
                });
                decimal += 1;
                if decimal == after && template.fill_mode && !overflow {
                    trim_fraction(&mut out, &template);
                }
            }
            Part::Digit { .. } => {
                let position = digit;
                digit += 1;
                if overflow {
                    write_sign(&mut out, &mut started);
                    out.push('#');
                } else if position < spaces {
                    if zero_start.is_some_and(|z| position >= z) {
                        write_sign(&mut out, &mut started);
                        out.push('0');
                    } else if !template.fill_mode {
                        out.push(' ');
                    }
                } else {
                    write_sign(&mut out, &mut started);
                    out.extend(whole[position - spaces..].chars().next());
                }
            }
            Part::Point => {
                write_sign(&mut out, &mut started);
                after_point = true;
                out.push('.');
            }
            Part::Group if started => out.push(','),
            Part::Group if !template.fill_mode => out.push(' '),
            Part::Group => {}
            Part::Sign(pattern) => out.push(match (pattern, negative) {
                (SignPattern::Either | SignPattern::Signed, true) => '-',
                (SignPattern::Either | SignPattern::Signed, false) => '+',
                (SignPattern::Minus, true) => '-',
                (SignPattern::Plus, false) => '+',
                (SignPattern::Minus | SignPattern::Plus, _) => ' ',
            }),
            Part::Ordinal { upper } => {
                if !overflow {
                    let suffix = ordinal(whole);
                    out.push_str(&if *upper {
                        suffix.to_uppercase()
                    } else {
                        suffix.into()
                    });
                }
            }
            Part::Currency => out.push(' '),
            Part::Exponent | Part::Roman { .. } | Part::Shift => {}
            Part::Text(text) => out.push_str(text),
        }
    }
    if template.angle_brackets {
        out.push(if negative { '>' } else { ' ' });
    }
    Ok(out)
}

/// `RN`: the value rounded to a whole number in Roman numerals, padded to 15
/// characters; `#`s outside 1 to 3999, as PostgreSQL writes them.
fn roman(value: &BigDecimal, upper: bool, fill_mode: bool) -> String {
    const NUMERALS: [(i64, &str); 13] = [
        (1000, "M"),
        (900, "CM"),
        (500, "D"),
        (400, "CD"),
        (100, "C"),
        (90, "XC"),
        (50, "L"),
        (40, "XL"),
        (10, "X"),
        (9, "IX"),
        (5, "V"),
        (4, "IV"),
        (1, "I"),
    ];
    let whole = value
        .with_scale_round(0, RoundingMode::HalfUp)
        .to_plain_string()
        .parse::<i64>()
        .unwrap_or(0);
    if !(1..=3999).contains(&whole) {
        return "#".repeat(15);
    }
    let mut rest = whole;
    let mut text = String::new();
    for (worth, numeral) in NUMERALS {
        while rest >= worth {
            text.push_str(numeral);
            rest -= worth;
        }
    }
    if !upper {
        text = text.to_lowercase();
    }
    if fill_mode {
        text
    } else {
        format!("{text:>15}")
    }
}

/// `EEEE`: a sign place, the mantissa with the template's decimals, `e+NN`.
fn scientific(value: &BigDecimal, template: &Template) -> String {
    let after = template.digits_after_point();
    let float = value.to_plain_string().parse::<f64>().unwrap_or(0.0);
    let text = format!("{:.*e}", after, float.abs());
    let (mantissa, exponent) = text.split_once('e').unwrap_or((&text, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let sign = if float < 0.0 {
        "-"
    } else if template.fill_mode {
        ""
    } else {
        " "
    };
    let exponent_sign = if exponent < 0 { '-' } else { '+' };
    format!(
        "{sign}{mantissa}e{exponent_sign}{:02}",
        exponent.unsigned_abs()
    )
}

/// Fill mode drops the trailing zeros of `9` decimal positions.
fn trim_fraction(out: &mut String, template: &Template) {
    let Some(point) = out.rfind('.') else {
        return;
    };
    let decimals: Vec<&Part> = template
        .parts
        .iter()
        .skip_while(|p| **p != Part::Point)
        .filter(|p| matches!(p, Part::Digit { .. }))
        .collect();
    let nines = decimals
        .iter()
        .rev()
        .take_while(|p| ***p == Part::Digit { zero: false })
        .count();
    for _ in 0..nines {
        if out.len() > point + 1 && out.ends_with('0') {
            out.pop();
        }
    }
}

/// The ordinal suffix of a number's integer digits (`st` for 21).
fn ordinal(whole: &str) -> &'static str {
    let last_two: i64 = whole
        .get(whole.len().saturating_sub(2)..)
        .and_then(|d| d.parse().ok())
        .unwrap_or(0);
    super::pg_to_char::ordinal_suffix(last_two)
}

#[cfg(test)]
mod tests {
    use super::format;

    #[test]
    fn numbers_format_as_postgresql_formats_them() {
        for (number, template, expected) in [
            ("1.5", "9.9", " 1.5"),
            ("-12", "9999", "  -12"),
            ("-12", "FM9999", "-12"),
            ("123", "99", " ##"),
            ("1", "FM9.99", "1."),
            ("1234567.891", "9,999,999.99", " 1,234,567.89"),
            ("-5", "0000", "-0005"),
            ("0.5", "9.9", "  .5"),
            ("0", "9", " 0"),
            ("-12", "999MI", " 12-"),
            ("-12", "999PR", " <12>"),
            ("-1.25", "9.9", "-1.3"),
            ("3", "FM9th", "3rd"),
            ("1234.5", "FM999,990.00", "1,234.50"),
        ] {
            assert_eq!(
                format(number, template).expect(template),
                expected,
                "{number} {template}"
            );
        }
    }
}
