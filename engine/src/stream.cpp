#include <ksieve/engine/cancel.hpp>
#include <ksieve/engine/stream.hpp>

#include <condition_variable>
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

} // namespace

void run_stream(unit_source & source, std::function<void(work_item &)> const & process,
                std::function<void(work_item const &)> const & write, std::size_t const depth)
{
    item_queue free_items, to_process, to_write;
    for (std::size_t i = 0; i < depth; ++i)
        free_items.push(std::make_unique<work_item>());
    std::exception_ptr reader_error, writer_error;

    std::thread reader{[&] {
        try
        {
            std::uint64_t unit = 0;
            for (;;)
            {
                auto item = free_items.pop(false);
                if (item == nullptr)
                    break;
                if (!source.next(item->r1, item->r2))
                    break;
                item->first_unit = unit;
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

    std::thread writer_thread;
    if (write)
    {
        writer_thread = std::thread{[&] {
            try
            {
                while (auto item = to_write.pop())
                {
                    write(*item);
                    free_items.push(std::move(item));
                }
            }
            catch (...)
            {
                writer_error = std::current_exception();
                free_items.close(); // stops the reader
            }
        }};
    }

    std::exception_ptr main_error;
    try
    {
        while (auto item = to_process.pop())
        {
            throw_if_interrupted();
            process(*item);
            if (write)
                to_write.push(std::move(item));
            else
                free_items.push(std::move(item));
        }
    }
    catch (...)
    {
        main_error = std::current_exception();
    }
    if (main_error)
        free_items.close(); // stop reading early
    to_write.close();
    if (writer_thread.joinable())
        writer_thread.join();
    free_items.close();
    // drain so the reader can finish a blocked push
    reader.join();
    if (main_error)
        std::rethrow_exception(main_error);
    if (reader_error)
        std::rethrow_exception(reader_error);
    if (writer_error)
        std::rethrow_exception(writer_error);
}

} // namespace ksieve
