#include <ksieve/engine/cancel.hpp>
#include <ksieve/engine/stream.hpp>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <map>
#include <deque>
#include <mutex>
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

} // namespace

void run_stream(unit_source & source, std::function<void(work_item &, unsigned)> const & process,
                std::function<void(work_item const &)> const & write, unsigned const workers)
{
    unsigned const nworkers = std::max(1u, workers);
    item_queue free_items, to_process, to_write;
    for (std::size_t i = 0; i < nworkers + 2; ++i)
        free_items.push(std::make_unique<work_item>());
    std::exception_ptr reader_error, writer_error;
    first_error worker_error;
    std::atomic<bool> failed{false};

    std::thread reader{[&] {
        try
        {
            std::uint64_t unit = 0, sequence = 0;
            for (;;)
            {
                auto item = free_items.pop(false);
                if (item == nullptr)
                    break;
                if (!source.next(item->r1, item->r2))
                    break;
                item->first_unit = unit;
                item->sequence = sequence++;
                unit += item->r1.size();
                to_process.push(std::move(item));
            }
        }
        catch (...)
        {
            reader_error = std::current_exception();
        }
        to_process.close();
    }};

    // The writer takes the batches in input order (work_item::sequence), holding back those that workers
    // finish early.
    std::thread writer_thread;
    if (write)
    {
        writer_thread = std::thread{[&] {
            try
            {
                std::map<std::uint64_t, std::unique_ptr<work_item>> early;
                std::uint64_t next = 0;
                while (auto item = to_write.pop())
                {
                    early.emplace(item->sequence, std::move(item));
                    for (auto it = early.find(next); it != early.end(); it = early.find(next))
                    {
                        write(*it->second);
                        free_items.push(std::move(it->second));
                        early.erase(it);
                        ++next;
                    }
                }
            }
            catch (...)
            {
                writer_error = std::current_exception();
                free_items.close(); // stops the reader
            }
        }};
    }

    auto work = [&](unsigned const worker) {
        try
        {
            while (!failed.load(std::memory_order_relaxed))
            {
                auto item = to_process.pop();
                if (item == nullptr)
                    break;
                throw_if_interrupted();
                process(*item, worker);
                if (write)
                    to_write.push(std::move(item));
                else
                    free_items.push(std::move(item));
            }
        }
        catch (...)
        {
            worker_error.set(std::current_exception());
            failed.store(true);
            free_items.close(); // stop reading early
        }
    };
    std::vector<std::thread> helpers;
    for (unsigned w = 1; w < nworkers; ++w)
        helpers.emplace_back(work, w);
    work(0);
    for (auto & t : helpers)
        t.join();
    to_write.close();
    if (writer_thread.joinable())
        writer_thread.join();
    free_items.close();
    // drain so the reader can finish a blocked push
    reader.join();
    worker_error.rethrow_if_set();
    if (reader_error)
        std::rethrow_exception(reader_error);
    if (writer_error)
        std::rethrow_exception(writer_error);
}

void run_stream(unit_source & source, std::function<void(work_item &)> const & process,
                std::function<void(work_item const &)> const & write)
{
    run_stream(
        source, [&](work_item & item, unsigned) { process(item); }, write, 1);
}

} // namespace ksieve
