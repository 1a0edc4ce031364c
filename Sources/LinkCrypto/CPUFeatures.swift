import CCPUFeatures

/// What this CPU offers the links' ciphers: the only Swift that reads CCPUFeatures.
public enum CPUFeatures {
    /// The CPU has AES instructions and carry-less multiplication for GCM: x86-64's AES-NI and PCLMULQDQ (CPUID leaf
    /// 1, ECX bits 25 and 1), aarch64's AES and PMULL (`getauxval(AT_HWCAP)`). Without them AES-GCM runs in software,
    /// slower than ChaCha20-Poly1305 and open to timing attacks on its tables, and is not offered by default.
    public static let hasAES = lansession_cpu_has_aes() != 0
}
