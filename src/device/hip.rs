//! PLACEHOLDER: replaced by the HIP backend work.
use super::*;
pub struct HipDevice { info: DeviceInfo, hw: HwSpec }
impl HipDevice {
    pub fn open(_sel: &DeviceSelection) -> Result<Self, DeviceError> {
        Err(DeviceError::NotAvailable { backend: "hip", reason: "not built yet".into() })
    }
}
impl Device for HipDevice {
    fn info(&self) -> &DeviceInfo { &self.info }
    fn hw_spec(&self) -> &HwSpec { &self.hw }
    fn set_problem(&mut self, _p: &GemmProblem, _t: &TimingOptions) -> Result<(), DeviceError> { unreachable!() }
    fn run_kernel(&mut self, _k: &CompiledKernel, _t: &TimingOptions) -> Outcome { unreachable!() }
    fn run_vendor(&mut self, _t: &TimingOptions) -> Outcome { unreachable!() }
}
