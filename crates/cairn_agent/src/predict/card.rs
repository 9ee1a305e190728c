//! Device cards (tools.md §4.3): what `cairn predict` prices device work with. Each figure is
//! published by the vendor (`source`: the page it is on), derived from published ones (the
//! derivation written as its source), or assumed (why, as its source). The default pricing card
//! is `rtx-5070-ti`; a card is named by its key, or by the prefix before its first hyphen when
//! one card has it (`h100` → `h100-sxm5`).
//!
//! Device work is priced as a roofline with fixed costs: the larger of its operations at the
//! card's FP32 rate and its bytes at the memory bandwidth (an access taken as 4 bytes), plus a
//! launch latency per device region run, plus the elements a `transfer` moves at the host link's
//! bandwidth (4 bytes each). Nothing of it is measured: every device price is `low` confidence.

use serde::Serialize;

/// One figure of a card.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Figure {
    pub value: f64,
    pub unit: &'static str,
    /// `published`, `derived` or `assumed`.
    pub kind: &'static str,
    /// Published: the vendor's page; derived: how; assumed: why.
    pub source: &'static str,
}

/// A device card.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Card {
    pub key: &'static str,
    pub name: &'static str,
    /// The device target of its compute capability (`sm_90`).
    pub target: &'static str,
    pub sms: Figure,
    pub fp32_tflops: Figure,
    pub memory_gbs: Figure,
    pub memory_gb: Figure,
    /// The host link's bandwidth, one direction.
    pub link_gbs: Figure,
    pub launch_us: Figure,
    pub bytes_per_access: Figure,
}

const fn published(value: f64, unit: &'static str, source: &'static str) -> Figure {
    Figure { value, unit, kind: "published", source }
}

const fn derived(value: f64, unit: &'static str, how: &'static str) -> Figure {
    Figure { value, unit, kind: "derived", source: how }
}

const LAUNCH: Figure = Figure {
    value: 5.0,
    unit: "µs",
    kind: "assumed",
    source: "a launch and its completion seen by the host, typical of the CUDA driver; no vendor publishes it per card",
};

const ACCESS: Figure = Figure {
    value: 4.0,
    unit: "bytes",
    kind: "assumed",
    source: "the work counts do not weigh an access by its element's size: 4 bytes (f32, u32) is taken for every one",
};

const GEFORCE_5070: &str = "https://www.nvidia.com/en-us/geforce/graphics-cards/50-series/rtx-5070-family/";
const GEFORCE_4090: &str = "https://www.nvidia.com/en-us/geforce/graphics-cards/40-series/rtx-4090/";
const H100: &str = "https://www.nvidia.com/en-us/data-center/h100/";
const H200: &str = "https://www.nvidia.com/en-us/data-center/h200/";
const A100: &str = "https://www.nvidia.com/en-us/data-center/a100/";
const L4: &str = "https://www.nvidia.com/en-us/data-center/l4/";

/// Every card, the default first.
pub const CARDS: [Card; 6] = [
    Card {
        key: "rtx-5070-ti",
        name: "NVIDIA GeForce RTX 5070 Ti",
        target: "sm_120",
        sms: derived(70.0, "SMs", "8,960 CUDA cores (published) at 128 per Blackwell SM"),
        fp32_tflops: derived(
            43.9,
            "TFLOPS",
            "8,960 CUDA cores × 2 operations (a fused multiply-add) × 2.45 GHz boost clock (published)",
        ),
        memory_gbs: derived(896.0, "GB/s", "28 Gbps GDDR7 × 256-bit interface / 8 (published)"),
        memory_gb: published(16.0, "GB", GEFORCE_5070),
        link_gbs: derived(
            63.0,
            "GB/s",
            "PCI Express 5.0 ×16 (published): 32 GT/s × 16 lanes × 128/130 / 8, one direction",
        ),
        launch_us: LAUNCH,
        bytes_per_access: ACCESS,
    },
    Card {
        key: "h100-sxm5",
        name: "NVIDIA H100 SXM5",
        target: "sm_90",
        sms: published(132.0, "SMs", H100),
        fp32_tflops: published(67.0, "TFLOPS", H100),
        memory_gbs: published(3350.0, "GB/s", H100),
        memory_gb: published(80.0, "GB", H100),
        link_gbs: derived(64.0, "GB/s", "PCIe Gen5 128 GB/s (published, both directions) / 2"),
        launch_us: LAUNCH,
        bytes_per_access: ACCESS,
    },
    Card {
        key: "h200-sxm",
        name: "NVIDIA H200 SXM",
        target: "sm_90",
        sms: derived(132.0, "SMs", "the H100 SXM5's GH100 configuration, which the H200 keeps"),
        fp32_tflops: published(67.0, "TFLOPS", H200),
        memory_gbs: published(4800.0, "GB/s", H200),
        memory_gb: published(141.0, "GB", H200),
        link_gbs: derived(64.0, "GB/s", "PCIe Gen5 128 GB/s (published, both directions) / 2"),
        launch_us: LAUNCH,
        bytes_per_access: ACCESS,
    },
    Card {
        key: "a100-sxm4",
        name: "NVIDIA A100 SXM4 80GB",
        target: "sm_80",
        sms: published(108.0, "SMs", A100),
        fp32_tflops: published(19.5, "TFLOPS", A100),
        memory_gbs: published(2039.0, "GB/s", A100),
        memory_gb: published(80.0, "GB", A100),
        link_gbs: derived(32.0, "GB/s", "PCIe Gen4 64 GB/s (published, both directions) / 2"),
        launch_us: LAUNCH,
        bytes_per_access: ACCESS,
    },
    Card {
        key: "l4",
        name: "NVIDIA L4",
        target: "sm_89",
        sms: derived(58.0, "SMs", "7,424 CUDA cores (published) at 128 per Ada SM"),
        fp32_tflops: published(30.3, "TFLOPS", L4),
        memory_gbs: published(300.0, "GB/s", L4),
        memory_gb: published(24.0, "GB", L4),
        link_gbs: derived(32.0, "GB/s", "PCIe Gen4 ×16 64 GB/s (published, both directions) / 2"),
        launch_us: LAUNCH,
        bytes_per_access: ACCESS,
    },
    Card {
        key: "rtx-4090",
        name: "NVIDIA GeForce RTX 4090",
        target: "sm_89",
        sms: derived(128.0, "SMs", "16,384 CUDA cores (published) at 128 per Ada SM"),
        fp32_tflops: derived(82.6, "TFLOPS", "16,384 CUDA cores × 2 operations × 2.52 GHz boost clock (published)"),
        memory_gbs: derived(1008.0, "GB/s", "21 Gbps GDDR6X × 384-bit interface / 8 (published)"),
        memory_gb: published(24.0, "GB", GEFORCE_4090),
        link_gbs: derived(
            31.5,
            "GB/s",
            "PCI Express 4.0 ×16 (published): 16 GT/s × 16 lanes × 128/130 / 8, one direction",
        ),
        launch_us: LAUNCH,
        bytes_per_access: ACCESS,
    },
];

/// The card device work is priced on when none is named.
pub fn default_card() -> &'static Card {
    &CARDS[0]
}

/// The card `name` names: its key, or the prefix before the first hyphen of exactly one key.
pub fn named(name: &str) -> Result<&'static Card, String> {
    if let Some(card) = CARDS.iter().find(|c| c.key == name) {
        return Ok(card);
    }
    let by_prefix: Vec<&Card> = CARDS.iter().filter(|c| c.key.split('-').next() == Some(name)).collect();
    match by_prefix.as_slice() {
        [card] => Ok(card),
        _ => {
            let keys: Vec<&str> = CARDS.iter().map(|c| c.key).collect();
            Err(format!("No device card {name}: name one of {}.", keys.join(", ")))
        }
    }
}

/// The cards `--card` asks for (`cairn predict`, `cairn tune`): the default without one, every
/// card that runs `target` for `all`, else the one named — refused when it cannot run `target`.
pub fn resolve(asked: Option<&str>, target: Option<&str>) -> Result<Vec<&'static Card>, String> {
    let runs = |card: &Card| target.is_none_or(|t| card.runs(t));
    match asked {
        None => Ok(vec![default_card()]),
        Some("all") => {
            let cards: Vec<&'static Card> = CARDS.iter().filter(|c| runs(c)).collect();
            match cards.is_empty() {
                true => Err(format!("No device card runs code for {}.", target.unwrap_or_default())),
                false => Ok(cards),
            }
        }
        Some(name) => {
            let card = named(name).map_err(|e| format!("{} Or name all.", e.trim_end_matches('.')))?;
            match runs(card) {
                true => Ok(vec![card]),
                false => Err(format!(
                    "The card {} ({}) cannot run code for {}: name a card of that capability or newer, or another target.",
                    card.key,
                    card.target,
                    target.unwrap_or_default()
                )),
            }
        }
    }
}

/// A device price, part by part (nanoseconds).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct DevicePrice {
    pub compute_ns: f64,
    pub memory_ns: f64,
    pub launch_ns: f64,
    pub link_ns: f64,
}

impl Card {
    /// What `ops` operations and `accesses` accesses on device lanes, `launches` region runs and
    /// `link` elements transferred cost on this card.
    pub fn price(&self, ops: f64, accesses: f64, launches: f64, link: f64) -> DevicePrice {
        let bytes = self.bytes_per_access.value;
        DevicePrice {
            // TFLOPS: 10^12 operations a second, 10^3 a nanosecond; GB/s: a byte a nanosecond.
            compute_ns: ops / (self.fp32_tflops.value * 1e3),
            memory_ns: accesses * bytes / self.memory_gbs.value,
            launch_ns: launches * self.launch_us.value * 1e3,
            link_ns: link * bytes / self.link_gbs.value,
        }
    }

    /// Whether code for device target `target` (`sm_NN[a|f]`) runs on this card: a target of a
    /// lower or equal compute capability without a family suffix does (PTX is compiled forward),
    /// a suffixed one only on its own capability.
    pub fn runs(&self, target: &str) -> bool {
        let capability = |t: &str| -> (u32, String) {
            let digits: String = t.trim_start_matches("sm_").chars().take_while(char::is_ascii_digit).collect();
            let suffix = t.trim_start_matches("sm_")[digits.len()..].to_string();
            (digits.parse().unwrap_or(0), suffix)
        };
        let (want, suffix) = capability(target);
        let (have, _) = capability(self.target);
        if suffix.is_empty() { want <= have } else { want == have }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cards_are_named_by_key_or_unique_prefix_and_price_a_roofline() {
        assert_eq!(named("h100").map(|c| c.key), Ok("h100-sxm5"));
        assert_eq!(named("rtx-4090").map(|c| c.key), Ok("rtx-4090"));
        // `rtx` is the prefix of two cards: not a name.
        assert!(named("rtx").is_err());
        assert!(named("v100").is_err_and(|e| e.contains("rtx-5070-ti")));
        // `all` with a target: the cards that run it.
        let keys = |cards: Vec<&Card>| cards.iter().map(|c| c.key).collect::<Vec<_>>();
        assert_eq!(resolve(Some("all"), Some("sm_90")).map(keys), Ok(vec!["rtx-5070-ti", "h100-sxm5", "h200-sxm"]));
        assert!(resolve(Some("a100"), Some("sm_90")).is_err_and(|e| e.contains("cannot run")));
        assert!(resolve(Some("v100"), None).is_err_and(|e| e.contains("Or name all")));
        assert_eq!(default_card().key, "rtx-5070-ti");
        let h200 = named("h200").expect("the H200");
        // 10^9 accesses of 4 bytes at 4,800 GB/s: 833,333 ns; 10^9 operations at 67 TFLOPS: ~14,925 ns.
        let price = h200.price(1e9, 1e9, 1.0, 0.0);
        assert!((price.memory_ns - 833_333.3).abs() < 1.0, "{price:?}");
        assert!((price.compute_ns - 14_925.4).abs() < 1.0, "{price:?}");
        assert_eq!(price.launch_ns, 5_000.0);
        assert!(h200.runs("sm_80") && h200.runs("sm_90") && h200.runs("sm_90a") && !h200.runs("sm_100"));
        assert!(!named("a100").expect("the A100").runs("sm_90"));
        for card in CARDS {
            for figure in [card.sms, card.fp32_tflops, card.memory_gbs, card.memory_gb, card.link_gbs] {
                assert!(figure.value > 0.0 && !figure.source.is_empty(), "{}", card.key);
            }
        }
    }
}
