//! PLACEHOLDER: replaced by the CUDA backend work.
use super::*;
pub struct CudaDevice { info: DeviceInfo, hw: HwSpec }
impl CudaDevice {
    pub fn open(_sel: &DeviceSelection) -> Result<Self, DeviceError> {
        Err(DeviceError::NotAvailable { backend: "cuda", reason: "not built yet".into() })
    }
}
impl Device for CudaDevice {
    fn info(&self) -> &DeviceInfo { &self.info }
    fn hw_spec(&self) -> &HwSpec { &self.hw }
    fn set_problem(&mut self, _p: &GemmProblem, _t: &TimingOptions) -> Result<(), DeviceError> { unreachable!() }
    fn run_kernel(&mut self, _k: &CompiledKernel, _t: &TimingOptions) -> Outcome { unreachable!() }
    fn run_vendor(&mut self, _t: &TimingOptions) -> Outcome { unreachable!() }
}
