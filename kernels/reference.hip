// TODO placeholder replaced by the kernel work
