#ifndef LANSESSION_CCPUFEATURES_SHIM_H
#define LANSESSION_CCPUFEATURES_SHIM_H

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#elif defined(__aarch64__)
#include <sys/auxv.h>
#include <asm/hwcap.h>
#endif

/// 1 when the CPU has AES instructions (x86: AES-NI, CPUID leaf 1 ECX bit 25, with PCLMULQDQ, bit 1, for GCM's
/// multiplication; aarch64: the kernel's HWCAP_AES, with HWCAP_PMULL); 0 otherwise, or on other architectures.
static inline int lansession_cpu_has_aes(void) {
#if defined(__x86_64__) || defined(__i386__)
    unsigned int eax = 0, ebx = 0, ecx = 0, edx = 0;
    if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return 0;
    return (ecx & (1u << 25)) != 0 && (ecx & (1u << 1)) != 0;
#elif defined(__aarch64__)
    unsigned long hwcap = getauxval(AT_HWCAP);
    return (hwcap & HWCAP_AES) != 0 && (hwcap & HWCAP_PMULL) != 0;
#else
    return 0;
#endif
}

#endif
