//! The kernel config space: parameters as data, their constraints, canonical names, and the
//! operations strategies need (default, enumerate, sample, neighbours).
//!
//! A [`Space`] is built for one (problem, hw) pair: each parameter's [`Domain`] is narrowed to
//! what makes sense there (e.g. the MI shapes of the dtype on that arch), and every config a
//! strategy gets from it passes [`constraints::check`].

mod big_tile_waves;
mod config;
pub mod constraints;
mod enumerate;
mod flat_batch;
mod fma;
mod fma_batch;
mod gemv;
mod n_fit;
mod narrow_n;
mod one_warpgroup_wave;
mod one_wave;
mod param;
mod persistent_starts;
mod short_k;
mod small_batch;
mod small_m;
mod split_starts;
mod tall_rows;
mod tile_order;
mod tuning_space;
mod unaligned;
mod unreadable;
mod unswapped_twin;
mod wave_fit;

pub use config::{GsuAlgo, KernelConfig, NameError};
pub use constraints::Violation;
pub use flat_batch::FLAT_BATCH_FIXED;
pub use gemv::GEMV_FIXED;
pub use param::{pack_mi, unpack_mi, Domain, DomainKind, ParamId};
pub use tuning_space::{Space, SpaceError};
