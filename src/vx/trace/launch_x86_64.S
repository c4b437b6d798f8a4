# vx's seccomp launcher for x86_64 Linux: argv = [self, SOCKET_FD, PROGRAM, ARGS...].
#
# It forbids itself new privileges, installs the BPF program that vx appends after `program:`
# (a u16 count of instructions, 6 bytes of padding, the instructions) with a listener, sends the
# listener's descriptor over the socket SOCKET_FD names (one byte, "+", with SCM_RIGHTS), closes
# both descriptors, and execs PROGRAM with ARGS and its own environment. Where the kernel refuses
# the filter it closes the socket (vx reads that as "not traced") and execs PROGRAM all the same.
# Exit 126: vx was gone before the listener could be handed over; 127: the exec failed.
#
# vx.trace.launch embeds the `.text` this assembles to; tests/unit/trace/test_launch.py checks
# that the bytes are these instructions (`as --64`, then `objcopy -O binary -j .text`).
    .intel_syntax noprefix
    .text
    .globl _start
_start:
    mov r12, [rsp]
    lea r13, [rsp + 8]
    lea r14, [r13 + r12 * 8 + 8]
    mov rsi, [r13 + 8]
    xor r15d, r15d
1:  movzx eax, byte ptr [rsi]
    test eax, eax
    jz 2f
    sub eax, 48
    imul r15d, r15d, 10
    add r15d, eax
    inc rsi
    jmp 1b
2:  sub rsp, 128
    mov eax, 157
    mov edi, 38
    mov esi, 1
    xor edx, edx
    xor r10d, r10d
    xor r8d, r8d
    syscall
    test rax, rax
    jnz untraced
    lea rax, [rip + program]
    movzx ecx, word ptr [rax]
    mov qword ptr [rsp], rcx
    lea rcx, [rax + 8]
    mov [rsp + 8], rcx
    mov eax, 317
    mov edi, 1
    mov esi, 8
    mov rdx, rsp
    syscall
    test rax, rax
    js untraced
    mov rbx, rax
    mov qword ptr [rsp + 16], 20
    mov dword ptr [rsp + 24], 1
    mov dword ptr [rsp + 28], 1
    mov dword ptr [rsp + 32], ebx
    mov dword ptr [rsp + 36], 0
    mov byte ptr [rsp + 112], 43
    lea rax, [rsp + 112]
    mov [rsp + 40], rax
    mov qword ptr [rsp + 48], 1
    xor eax, eax
    mov [rsp + 56], rax
    mov [rsp + 64], rax
    lea rax, [rsp + 40]
    mov [rsp + 72], rax
    mov qword ptr [rsp + 80], 1
    lea rax, [rsp + 16]
    mov [rsp + 88], rax
    mov qword ptr [rsp + 96], 24
    mov qword ptr [rsp + 104], 0
    mov eax, 46
    mov edi, r15d
    lea rsi, [rsp + 56]
    xor edx, edx
    syscall
    test rax, rax
    js lost
    mov eax, 3
    mov edi, ebx
    syscall
untraced:
    mov eax, 3
    mov edi, r15d
    syscall
    mov eax, 59
    mov rdi, [r13 + 16]
    lea rsi, [r13 + 16]
    mov rdx, r14
    syscall
    mov edi, 127
    jmp leave
lost:
    mov edi, 126
leave:
    mov eax, 231
    syscall
    .balign 8
program:
