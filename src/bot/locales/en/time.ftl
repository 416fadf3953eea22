# The words of time and attachments (src/time/format.ts, src/time/instants.ts, src/time/words.ts; attachment names
# wherever a message is retold in words: the transcript, digests, staff notices).

# A zone after a time: "14:00 Moscow time". A zone without a name here: its offset, "14:00 UTC+5".
time-zone-in = { $zone ->
        [Europe-Kaliningrad] Kaliningrad time
        [Europe-Moscow] Moscow time
        [Europe-Samara] Samara time
        [Asia-Yekaterinburg] Yekaterinburg time
        [Asia-Omsk] Omsk time
        [Asia-Novosibirsk] Novosibirsk time
        [Asia-Krasnoyarsk] Krasnoyarsk time
        [Asia-Irkutsk] Irkutsk time
        [Asia-Vladivostok] Vladivostok time
        [Europe-London] London time
        [Europe-Berlin] Berlin time
        [Asia-Tbilisi] Tbilisi time
        [Asia-Almaty] Almaty time
        [Asia-Dubai] Dubai time
        [America-New_York] New York time
        [UTC] UTC
       *[other] {$offset}
    }
time-hours = {$n} h
time-minutes = {$n} min
time-days = { $n ->
        [one] {$n} day
       *[other] {$n} days
    }

media-kind = { $kind ->
        [photo] photo
        [video] video
        [video_note] video message
        [voice] voice message
        [audio] audio
        [document] file
        [animation] GIF
        [sticker] sticker
        [location] location
        [venue] place
        [contact] contact
        [poll] poll
        [dice] dice
        [story] story
       *[other] message
    }
