# Слова времени и вложений (src/time/format.ts, src/time/instants.ts, src/time/words.ts; подписи вложений — там,
# где сообщение пересказывается словами: расшифровка, сводки, уведомления сотрудникам).

# Пояс после времени: «14:00 по Москве». Пояс без имени здесь — смещением: «14:00 UTC+5».
time-zone-in = { $zone ->
        [Europe-Kaliningrad] по Калининграду
        [Europe-Moscow] по Москве
        [Europe-Samara] по Самаре
        [Asia-Yekaterinburg] по Екатеринбургу
        [Asia-Omsk] по Омску
        [Asia-Novosibirsk] по Новосибирску
        [Asia-Krasnoyarsk] по Красноярску
        [Asia-Irkutsk] по Иркутску
        [Asia-Vladivostok] по Владивостоку
        [Europe-London] по Лондону
        [Europe-Berlin] по Берлину
        [Asia-Tbilisi] по Тбилиси
        [Asia-Almaty] по Алматы
        [Asia-Dubai] по Дубаю
        [America-New_York] по Нью-Йорку
        [UTC] UTC
       *[other] {$offset}
    }
time-hours = {$n} ч
time-minutes = {$n} мин
time-days = { $n ->
        [one] {$n} день
        [few] {$n} дня
       *[many] {$n} дней
    }

media-kind = { $kind ->
        [photo] фото
        [video] видео
        [video_note] видеосообщение
        [voice] голосовое сообщение
        [audio] аудио
        [document] файл
        [animation] GIF
        [sticker] стикер
        [location] геопозиция
        [venue] место
        [contact] контакт
        [poll] опрос
        [dice] кубик
        [story] история
       *[other] сообщение
    }
