// Copyright (c) 2026 The redlock authors. Distributed under the Boost Software License 1.0.
#ifndef REDLOCK_SRC_RUNTIME_RECYCLING_ALLOCATOR_HPP
#define REDLOCK_SRC_RUNTIME_RECYCLING_ALLOCATOR_HPP

#include <cstddef>
#include <memory>
#include <new>
#include <utility>

// Under AddressSanitizer every block goes back to operator delete, so that a use after free
// of these objects is still caught (a recycled block would hide it).
#if defined(__SANITIZE_ADDRESS__)
#define REDLOCK_RECYCLE_BLOCKS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define REDLOCK_RECYCLE_BLOCKS 0
#endif
#endif
#ifndef REDLOCK_RECYCLE_BLOCKS
#define REDLOCK_RECYCLE_BLOCKS 1
#endif

namespace redlock::detail {

/// @brief An allocator that keeps the blocks it frees in a cache of the calling thread (up to
/// `recycled_blocks` per type), and allocates from there first.
///
/// For the objects made for every lock cycle (each acquisition's and release's operation, the
/// lock's state): they are too large for the C library's per-thread cache, and with many
/// operations in flight its search for a free block of their size cost about 550 instructions
/// per allocation and free (docs/performance.md). A block freed on another thread than the
/// one that allocated it joins that thread's cache. A thread's cache is freed when the thread
/// ends; a block freed after that (by a thread's last destructors) goes to operator delete.
template <class T>
class recycling_allocator
{
public:
    using value_type = T;
    /// The blocks of one type that each thread keeps at most (none under AddressSanitizer).
    static constexpr std::size_t recycled_blocks = REDLOCK_RECYCLE_BLOCKS ? 128 : 0;

    recycling_allocator() noexcept = default;
    template <class U>
    recycling_allocator(const recycling_allocator<U>&) noexcept  // NOLINT: rebinding
    {}

    T* allocate(std::size_t n)
    {
        if (recycled_blocks != 0 && n == 1)
            if (void* p = cache().take())
                return static_cast<T*>(p);
        return static_cast<T*>(::operator new(n * sizeof(T)));
    }

    void deallocate(T* p, std::size_t n) noexcept
    {
        if (recycled_blocks != 0 && n == 1 && cache().keep(p))
            return;
        ::operator delete(p);
    }

    template <class U>
    bool operator==(const recycling_allocator<U>&) const noexcept
    {
        return true;
    }

private:
    static_assert(sizeof(T) >= sizeof(void*) && alignof(T) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__,
                  "a block must hold a pointer, and operator new align it");

    class free_list
    {
    public:
        free_list() = default;
        free_list(const free_list&) = delete;
        free_list& operator=(const free_list&) = delete;
        ~free_list()
        {
            gone_ = true;
            while (head_)
                ::operator delete(std::exchange(head_, head_->next));
        }

        void* take() noexcept
        {
            if (!head_)
                return nullptr;
            --count_;
            return std::exchange(head_, head_->next);
        }
        bool keep(void* p) noexcept
        {
            if (gone_ || count_ == recycled_blocks)
                return false;
            head_ = ::new (p) node{head_};
            ++count_;
            return true;
        }

    private:
        struct node
        {
            node* next;
        };
        node* head_ = nullptr;
        std::size_t count_ = 0;
        bool gone_ = false;
    };

    static free_list& cache() noexcept
    {
        thread_local free_list blocks;
        return blocks;
    }
};

/// std::make_shared of a `T` whose block (the object and its counts) comes from a
/// recycling_allocator.
template <class T, class... Args>
std::shared_ptr<T> make_recycled(Args&&... args)
{
    return std::allocate_shared<T>(recycling_allocator<T>(), std::forward<Args>(args)...);
}

}  // namespace redlock::detail

#endif
