// The reader -> processing -> writer stream of batches: bounded queues, the reader, writer and
// worker threads, and the errors of any of them (running out of threads or memory included)
// rethrown once on the calling thread after every thread has stopped.
#include <ksieve/engine/resources.hpp>
#include <ksieve/engine/stream.hpp>
#include <ksieve/filters/support/cancel.hpp>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <new>
#include <system_error>
#include <thread>

namespace ksieve
{

namespace
{

// Bounded blocking queue of work items; close() wakes everybody.
class item_queue
{
public:
    void push(std::unique_ptr<work_item> item)
    {
        std::unique_lock lock{mutex_};
        items_.push_back(std::move(item));
        cv_.notify_all();
    }
    // nullptr when closed and empty (drain) or as soon as closed (!drain)
    std::unique_ptr<work_item> pop(bool const drain = true)
    {
        std::unique_lock lock{mutex_};
        cv_.wait(lock, [&] { return !items_.empty() || closed_; });
        if (items_.empty() || (closed_ && !drain))
            return nullptr;
        auto item = std::move(items_.front());
        items_.pop_front();
        return item;
    }
    void close()
    {
        std::unique_lock lock{mutex_};
        closed_ = true;
        cv_.notify_all();
    }

private:
    std::mutex mutex_;
    std::condition_variable cv_;
    std::deque<std::unique_ptr<work_item>> items_;
    bool closed_{false};
};

// The first exception of any thread, kept.
class first_error
{
public:
    void set(std::exception_ptr e)
    {
        std::lock_guard lock{mutex_};
        if (!error_)
            error_ = std::move(e);
    }
    void rethrow_if_set()
    {
        if (error_)
            std::rethrow_exception(error_);
    }

private:
    std::mutex mutex_;
    std::exception_ptr error_;
};

// The current exception, running out of memory made a resource_error that says while doing `what`
// (left as it is where even that error cannot be made: run() translates it when it rethrows).
std::exception_ptr current_error(char const * const what) noexcept
{
    try
    {
        throw;
    }
    catch (std::bad_alloc const &)
    {
        try
        {
            return std::make_exception_ptr(memory_error(what));
        }
        catch (...)
        {
            return std::current_exception();
        }
    }
    catch (...)
    {
        return std::current_exception();
    }
}

// One run of the stream: its queues, threads and errors.
class stream_run
{
public:
    using process_fn = std::function<void(work_item &, unsigned)>;
    using write_fn = std::function<void(work_item const &)>;

    stream_run(unit_source & source, process_fn const & process, write_fn const & write,
               unsigned workers)
        : source_{source}, process_{process}, write_{write}, workers_{std::max(1u, workers)}
    {
    }

    // The whole run; rethrows the first error after every thread has stopped.
    void run()
    {
        try
        {
            for (std::size_t i = 0; i < workers_ + 2; ++i)
                free_items_.push(std::make_unique<work_item>());
        }
        catch (std::bad_alloc const &)
        {
            throw memory_error("starting the run");
        }
        start_threads();
        if (!failed_.load())
            work(0);
        join_threads();
        try
        {
            for (first_error * const e :
                 {&start_error_, &worker_error_, &reader_error_, &writer_error_})
                e->rethrow_if_set();
        }
        catch (std::bad_alloc const &) // (the threads have freed their memory by now)
        {
            throw memory_error("running the batches");
        }
    }

private:
    // The reader, the writer (if any) and the workers beyond the calling thread. A thread that the
    // system refuses to start stops the run: the threads running finish, and the refusal is the
    // error.
    void start_threads()
    {
        char const * what = "the reader thread";
        try
        {
            helpers_.reserve(workers_ - 1);
            reader_ = std::thread{[this] { read(); }};
            what = "the writer thread";
            if (write_)
                writer_ = std::thread{[this] { write_in_order(); }};
            what = "a worker thread";
            for (unsigned w = 1; w < workers_; ++w)
                helpers_.emplace_back([this, w] { work(w); });
        }
        catch (std::system_error const & e)
        {
            start_error_.set(std::make_exception_ptr(thread_error(what, e.code().message())));
            stop();
        }
        catch (...)
        {
            start_error_.set(current_error("starting the threads of the run"));
            stop();
        }
    }

    // Stops every thread at its next check: no more reading, no more batches taken.
    void stop()
    {
        failed_.store(true);
        free_items_.close();
    }

    void join_threads()
    {
        for (auto & t : helpers_)
            t.join();
        to_write_.close();
        if (writer_.joinable())
            writer_.join();
        free_items_.close();
        if (reader_.joinable())
            reader_.join();
    }

    // The reader thread: batches from the source, numbered in input order.
    void read() noexcept
    {
        try
        {
            std::uint64_t sequence = 0;
            while (auto item = free_items_.pop(false))
            {
                if (!source_.next(item->r1, item->r2))
                    break;
                item->sequence = sequence++;
                to_process_.push(std::move(item));
            }
        }
        catch (...)
        {
            reader_error_.set(current_error("reading the input"));
        }
        to_process_.close();
    }

    // The writer thread takes the batches in input order (work_item::sequence), holding back those
    // that workers finish early.
    void write_in_order() noexcept
    {
        try
        {
            std::map<std::uint64_t, std::unique_ptr<work_item>> early;
            std::uint64_t next = 0;
            while (auto item = to_write_.pop())
            {
                early.emplace(item->sequence, std::move(item));
                for (auto it = early.find(next); it != early.end(); it = early.find(next))
                {
                    write_(*it->second);
                    free_items_.push(std::move(it->second));
                    early.erase(it);
                    ++next;
                }
            }
        }
        catch (...)
        {
            writer_error_.set(current_error("writing the output"));
            free_items_.close(); // stops the reader
        }
    }

    // Worker `worker` (0: the calling thread): batches until none is left or a thread failed.
    void work(unsigned const worker) noexcept
    {
        try
        {
            while (!failed_.load(std::memory_order_relaxed))
            {
                auto item = to_process_.pop();
                if (item == nullptr)
                    break;
                throw_if_stop_requested();
                process_(*item, worker);
                if (write_)
                    to_write_.push(std::move(item));
                else
                    free_items_.push(std::move(item));
            }
        }
        catch (...)
        {
            worker_error_.set(current_error("processing a batch of reads"));
            stop(); // stop reading early
        }
    }

    unit_source & source_;
    process_fn const & process_;
    write_fn const & write_;
    unsigned const workers_;
    item_queue free_items_, to_process_, to_write_;
    first_error start_error_, worker_error_, reader_error_, writer_error_;
    std::atomic<bool> failed_{false};
    std::thread reader_, writer_;
    std::vector<std::thread> helpers_;
};

} // namespace

void run_stream(unit_source & source, std::function<void(work_item &, unsigned)> const & process,
                std::function<void(work_item const &)> const & write, unsigned const workers)
{
    stream_run{source, process, write, workers}.run();
}

void run_stream(unit_source & source, std::function<void(work_item &)> const & process,
                std::function<void(work_item const &)> const & write)
{
    run_stream(
        source, [&](work_item & item, unsigned) { process(item); }, write, 1);
}

} // namespace ksieve
