//! The buckets of a calendar (or time-zoned) `date_histogram` between two
//! instants, laid over a grid of equal cells no longer than the shortest
//! bucket: a cell meets at most two buckets, so an instant's bucket is one
//! division, one lookup and one comparison away, not a search among the
//! buckets (months, years and days across a daylight-saving change differ
//! in length, so no division alone finds them).
//!
//! Buckets are numbered from the first one the grid was made for; a grid
//! grown to earlier instants numbers its new buckets below that one, so
//! numbers handed out stay valid.

use super::{bucket_start, next_key, DateInterval};
use crate::zone::Zone;

#[derive(Debug, Clone)]
pub(super) struct Grid {
    /// The number of the bucket starting at `bounds[0]`.
    base: i64,
    /// Each bucket's start, then the last one's end.
    bounds: Vec<i64>,
    /// The cells' length: the shortest bucket's.
    width: i64,
    /// For each cell, the bucket (an index into `bounds`) holding its start.
    cells: Vec<u32>,
}

impl Grid {
    /// A grid of the buckets holding every instant of `lo..=hi` and those
    /// of `old` (a grid of the same interval and zone, whose numbers it keeps); none when that is more than
    /// `most` buckets, or the buckets do not follow one another.
    pub fn covering(
        interval: DateInterval,
        zone: Zone,
        old: Option<&Grid>,
        (lo, hi): (i64, i64),
        most: usize,
    ) -> Option<Grid> {
        let (lo, hi) = match old {
            Some(g) => (lo.min(g.bounds[0]), hi.max(*g.bounds.last()? - 1)),
            None => (lo, hi),
        };
        let mut bounds = vec![bucket_start(interval, zone, lo)];
        while *bounds.last()? <= hi {
            let start = *bounds.last()?;
            let end = next_key(interval, zone, start);
            // Each bucket must end where the next begins, as a search among them would find.
            if end <= start || bucket_start(interval, zone, end) != end || bounds.len() > most {
                return None;
            }
            bounds.push(end);
        }
        let width = bounds.windows(2).map(|w| w[1] - w[0]).min()?;
        let cells = cells(&bounds, width)?;
        let base = match old {
            Some(g) => g.base - bounds.iter().position(|&b| b == g.bounds[0])? as i64,
            None => 0,
        };
        Some(Grid { base, bounds, width, cells })
    }

    /// Whether `t` falls in one of the grid's buckets.
    pub fn holds(&self, t: i64) -> bool {
        self.bounds[0] <= t && t < *self.bounds.last().expect("a grid has bounds")
    }

    /// The number of the bucket holding `t` (which the grid holds).
    #[inline(always)]
    pub fn number(&self, t: i64) -> i64 {
        let i = self.cells[((t - self.bounds[0]) / self.width) as usize] as usize;
        self.base + (i + usize::from(t >= self.bounds[i + 1])) as i64
    }

    /// The start of bucket `n`.
    pub fn start(&self, n: i64) -> i64 {
        self.bounds[(n - self.base) as usize]
    }
}

/// For each cell of `width` from the first bound, the bucket holding the
/// cell's start; none when they are too many to number.
fn cells(bounds: &[i64], width: i64) -> Option<Vec<u32>> {
    let (first, end) = (bounds[0], *bounds.last()?);
    let count = usize::try_from((end.checked_sub(first)? - 1) / width + 1).ok()?;
    let mut cells = Vec::with_capacity(count);
    let mut bucket = 0;
    for c in 0..count as i64 {
        let start = first + c * width;
        while bounds[bucket + 1] <= start {
            bucket += 1;
        }
        cells.push(u32::try_from(bucket).ok()?);
    }
    Some(cells)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aggs::CalendarUnit;

    const HOUR: i64 = 3_600_000;

    /// Instants spread over `lo..=hi`, the ends included.
    fn instants(lo: i64, hi: i64) -> impl Iterator<Item = i64> {
        let step = ((hi - lo) / 5_000).max(1);
        (lo..=hi).step_by(step as usize).chain([hi])
    }

    #[test]
    fn every_instant_is_numbered_into_the_bucket_a_search_finds() {
        let paris = Zone::parse("Europe/Paris").unwrap();
        let kolkata = Zone::parse("Asia/Kolkata").unwrap();
        // 2019-01-01 to 2021-12-31: six daylight-saving changes in Paris, a leap year.
        let (lo, hi) = (1_546_300_800_000, 1_640_995_199_999);
        let cases = [
            (DateInterval::Calendar(CalendarUnit::Day), paris),
            (DateInterval::Calendar(CalendarUnit::Hour), paris),
            (DateInterval::Calendar(CalendarUnit::Month), paris),
            (DateInterval::Calendar(CalendarUnit::Quarter), kolkata),
            (DateInterval::Calendar(CalendarUnit::Year), Zone::UTC),
            (DateInterval::Calendar(CalendarUnit::Week), kolkata),
            (DateInterval::Fixed(7 * 24 * HOUR), paris),
        ];
        for (interval, zone) in cases {
            let grid = Grid::covering(interval, zone, None, (lo, hi), 100_000).unwrap();
            for t in instants(lo, hi) {
                assert!(grid.holds(t));
                let n = grid.number(t);
                assert_eq!(grid.start(n), bucket_start(interval, zone, t), "{interval:?} {zone:?} at {t}");
                assert!(t < next_key(interval, zone, grid.start(n)));
            }
        }
    }

    #[test]
    fn a_grown_grid_keeps_the_numbers_it_gave() {
        let paris = Zone::parse("Europe/Paris").unwrap();
        let day = DateInterval::Calendar(CalendarUnit::Day);
        let (lo, hi) = (1_600_000_000_000, 1_610_000_000_000);
        let first = Grid::covering(day, paris, None, (lo, hi), 1_000).unwrap();
        let grown = Grid::covering(day, paris, Some(&first), (lo - 400 * 24 * HOUR, lo), 1_000).unwrap();
        for t in instants(lo, hi) {
            assert_eq!(grown.number(t), first.number(t));
        }
        assert!(grown.number(lo - 400 * 24 * HOUR) < 0, "buckets before the first are numbered below it");
        assert!(
            Grid::covering(day, paris, Some(&first), (lo - 2_000 * 24 * HOUR, lo), 1_000).is_none(),
            "too many"
        );
    }
}
